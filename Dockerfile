# syntax=docker/dockerfile:1
# Vouch is compiled to dist/ (`npm run build`) and served by `node dist/cli.js serve`, exactly as
# `npm start` does. No Docker engine on the build machine: test/cli/serve-as-container-user.test.ts
# runs this image's command as a non-root user in a root-owned /app instead; see docs/deployment.md.
#
# Node 22 is the default: Node 20 reached end of life in April 2026, and one runtime dependency
# (cookie, via fastify's light-my-request) declares node >= 22. The suite itself runs on Node 20.19+;
# build with `--build-arg NODE_VERSION=20` to match that exactly.
ARG NODE_VERSION=22

# ---- build: all dependencies to compile, then production ones only. better-sqlite3 downloads a
# prebuilt binary when one matches this platform and compiles itself with python3/make/g++
# otherwise. The tools stay in this stage.
FROM node:${NODE_VERSION}-bookworm-slim AS deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
RUN npm ci --no-audit --no-fund
COPY src ./src
COPY console ./console
RUN npm run build \
 && npm prune --omit=dev \
 && npm cache clean --force

# ---- runtime
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    VOUCH_DATABASE_URL=sqlite:/data/vouch.db
WORKDIR /app
# A dedicated user; the application files stay root-owned (read-only to it), only /data is writable.
# /data is created owned by vouch so that a named volume mounted there starts owned by vouch too.
# Without VOUCH_SECRET_KEY the generated key-encryption key goes beside a SQLite store, and to
# ./data/vouch.key (relative to /app) with PostgreSQL: /app/data points at /data, so that key is
# on the volume as well and survives a re-created container (docs/deployment.md).
RUN groupadd --system --gid 10001 vouch \
 && useradd --system --uid 10001 --gid vouch --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin vouch \
 && mkdir -p /data \
 && chown vouch:vouch /data \
 && chmod 0700 /data \
 && ln -s /data /app/data
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/dist ./dist
# The operator console, built by Vite in the build stage (served at /console).
COPY --from=deps /app/console/dist ./console/dist
# dist/ reads no other file of the repo but console/dist (the policy is built in unless VOUCH_POLICY_FILE names one).
# bin/vouch.js and src/ serve `docker exec … node bin/vouch.js clients create …` (through tsx).
COPY package.json package-lock.json ./
COPY bin ./bin
COPY src ./src
USER vouch
VOLUME ["/data"]
EXPOSE 8080
# /readyz: 200 when the store answers (also while Redis is down: body "degraded"), 503 otherwise.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# One worker per core unless VOUCH_WORKERS or --workers says otherwise; SIGTERM drains (up to 10 s).
CMD ["node", "--max-old-space-size=1024", "--single-threaded-gc", "dist/cli.js", "serve"]
