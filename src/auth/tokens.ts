// RFC 9068 access tokens: EdDSA-signed JWTs. Verified tokens are cached by digest until they
// expire, so the hot path pays one SHA-256 rather than a signature check; a deactivated client
// is checked on every request against the in-memory revocation set. A token whose signature
// checks out must still name an existing, active client and a lifetime we would have issued: a
// leaked signing key must not mint tokens for made-up clients or for years.
import { randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import { sha256Hex } from '../lib/digest.ts';
import type { KeyRing } from './signing-keys.ts';
import { isEnvironment, isRole, type Environment, type Principal, type Role } from '../lib/principal.ts';

export interface TokenSettings {
  issuer: string;
  /** other `iss` values verification accepts (the pre-URL default, docs/operations.md) */
  formerIssuers?: string[];
  /** origins a request may be issued under instead of `issuer` (loopback names, auth/issuer.ts); all verify */
  aliases?: string[];
  audience: string;
  ttlSeconds: number;
}

interface Claims extends JWTPayload {
  client_id?: unknown;
  scope?: unknown;
  role?: unknown;
  /** 'live' | 'test': the client's environment (test mode) */
  environment?: unknown;
  /** a person's token (docs/api.md, "People"): their role when it was issued; the live one decides */
  person_role?: unknown;
}

/** A person as the store has them now: a token of theirs stands for this, not for its claims. */
export type PersonLookup = (userId: string) => Promise<Principal | undefined>;

const LEEWAY_SECONDS = 30;
/** Compact JWS, three base64url parts and nothing else (no padding, no other alphabet). */
const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * base64url decoders ignore padding and the unused low bits of the last character, so several
 * strings decode to the same token; only the one that re-encodes to itself is accepted, so a
 * token has exactly one spelling (and one cache entry, one log digest).
 */
function canonical(token: string): boolean {
  if (!COMPACT.test(token)) return false;
  return token.split('.').every((part) => Buffer.from(part, 'base64url').toString('base64url') === part);
}

/** Whether a client exists and is active; the store's answer (see clients.ts isClientActive). */
export type ClientLookup = (clientId: string) => Promise<boolean>;

export class TokenService {
  private readonly verified = new LRUCache<string, { principal: Principal; expiresAt: number }>({ max: 50_000 });
  private readonly deactivatedClients = new Set<string>();
  /**
   * Clients the store said were active. Only positive answers are kept: a client created by
   * another process must be usable at once. Deactivation (change feed) removes the entry.
   */
  private readonly activeClients = new LRUCache<string, true>({ max: 10_000 });

  constructor(
    private readonly ring: KeyRing,
    private readonly settings: TokenSettings,
    private readonly clientIsActive: ClientLookup,
    /** without it, person tokens are refused */
    private readonly person?: PersonLookup,
  ) {}

  /**
   * The issuer for a request that came to `origin` (scheme://host:port): an alias when it is one, else the configured
   * issuer.
   */
  issuerFor(origin: string | undefined): string {
    return origin !== undefined && this.settings.aliases?.includes(origin) ? origin : this.settings.issuer;
  }

  async issue(
    clientId: string,
    role: Role,
    scopes: string[],
    environment: Environment,
    origin?: string,
    personRole?: string,
  ): Promise<{ token: string; expiresIn: number }> {
    const { kid, key } = await this.ring.signingKey();
    const now = Math.floor(Date.now() / 1000);
    const claims = { client_id: clientId, scope: scopes.join(' '), role, environment };
    const token = await new SignJWT(personRole === undefined ? claims : { ...claims, person_role: personRole })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid })
      .setIssuer(this.issuerFor(origin))
      .setAudience(this.settings.audience)
      .setSubject(clientId)
      .setIssuedAt(now)
      .setExpirationTime(now + this.settings.ttlSeconds)
      .setJti(randomUUID())
      .sign(key);
    return { token, expiresIn: this.settings.ttlSeconds };
  }

  markClientDeactivated(clientId: string): void {
    this.deactivatedClients.add(clientId);
    this.activeClients.delete(clientId);
  }

  isClientDeactivated(clientId: string): boolean {
    return this.deactivatedClients.has(clientId);
  }

  /** The principal a token stands for, or undefined for any token that is not ours and valid. */
  async verify(token: string): Promise<Principal | undefined> {
    const digest = sha256Hex(token);
    const now = Date.now();
    const hit = this.verified.get(digest);
    let principal: Principal | undefined;
    if (hit && hit.expiresAt > now) {
      principal = hit.principal;
    } else {
      if (!canonical(token)) return undefined;
      const checked = await this.verifySignature(token);
      if (!checked) return undefined;
      if (checked.principal.kind !== 'user' && !(await this.isActive(checked.principal.clientId))) return undefined;
      principal = checked.principal;
      this.verified.set(digest, checked);
    }
    // A person's role and status are read at every request: a demotion or a deactivation holds at once.
    if (principal.kind === 'user') return this.person ? this.person(principal.id) : undefined;
    return this.deactivatedClients.has(principal.clientId) ? undefined : principal;
  }

  private async isActive(clientId: string): Promise<boolean> {
    if (this.deactivatedClients.has(clientId)) return false;
    if (this.activeClients.has(clientId)) return true;
    const active = await this.clientIsActive(clientId);
    // A deactivation announced while the lookup ran wins over its (older) answer.
    if (active && !this.deactivatedClients.has(clientId)) this.activeClients.set(clientId, true);
    return active;
  }

  private async verifySignature(token: string): Promise<{ principal: Principal; expiresAt: number } | undefined> {
    try {
      const { payload } = await jwtVerify<Claims>(
        token,
        async (header) => {
          const key = header.kid ? await this.ring.verificationKey(header.kid) : undefined;
          if (!key) throw new joseErrors.JWKSNoMatchingKey();
          return key;
        },
        {
          issuer: [this.settings.issuer, ...(this.settings.aliases ?? []), ...(this.settings.formerIssuers ?? [])],
          audience: this.settings.audience,
          algorithms: ['EdDSA'],
          typ: 'at+jwt',
          clockTolerance: LEEWAY_SECONDS,
          requiredClaims: ['exp', 'iat', 'sub', 'jti'],
        },
      );
      const { sub, client_id: clientId, scope, role, exp, iat } = payload;
      if (
        typeof sub !== 'string' ||
        clientId !== sub ||
        typeof scope !== 'string' ||
        typeof role !== 'string' ||
        !isRole(role) ||
        typeof exp !== 'number'
      ) {
        return undefined;
      }
      // A client's environment never changes, so the signed claim is as good as a lookup. Tokens
      // issued before test mode existed carry none and were live; a claim that is present must be
      // live or test (null is not "absent").
      const environment = payload.environment === undefined ? 'live' : payload.environment;
      if (!isEnvironment(environment)) return undefined;
      // We never issue a longer lifetime, nor date a token ahead (which would stretch it as well).
      if (
        typeof iat !== 'number' ||
        exp - iat > this.settings.ttlSeconds + LEEWAY_SECONDS ||
        iat > Date.now() / 1000 + LEEWAY_SECONDS
      )
        return undefined;
      const principal: Principal = {
        id: sub,
        kind: payload.person_role === undefined ? 'client' : 'user',
        clientId: sub,
        role,
        scopes: new Set(scope.split(' ').filter(Boolean)),
        environment,
      };
      return { principal, expiresAt: (exp + LEEWAY_SECONDS) * 1000 };
    } catch {
      return undefined;
    }
  }
}
