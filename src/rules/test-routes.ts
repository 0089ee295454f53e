// Testing a rule on the past over HTTP (docs/api.md, "Rules and lists"; docs/rules.md, "Testing a
// rule"): POST /api/v1/rules/test with a rule body, POST /api/v1/rules/{id}/test for a stored
// rule's current version. The replay runs in a worker thread (replay-thread.ts); this file checks
// the request, picks the window and the policy's settings, and maps the outcome to a response.
import { parseTime } from '../http/validation.ts';
import type { Static } from 'typebox';
import type { FastifyReply } from 'fastify';
import { defineRoute, ownerFilter, type RouteDefinition } from '../http/route.ts';
import { ApiError, problemResponses } from '../http/problem.ts';
import type { Store } from '../store/db.ts';
import type { Environment } from '../lib/principal.ts';
import type { PolicyRegistry } from '../policies/registry.ts';
import { SIGNAL_NAMES } from '../model/policy.ts';
import { outcomesOf } from '../model/outcome-policy.ts';
import { storeSource } from '../store/readers.ts';
import type { Outcome } from '../model/outcomes.ts';
import { checkRule, listsNamed, type RuleBody } from './compile.ts';
import { ruleToTest } from './repository.ts';
import { listKinds } from './list-repository.ts';
import { UNSAVED_RULE_ID, type ReplaySettings, type RuleTestResult } from './replay.ts';
import { columnsRead } from './replay-columns.ts';
import { replayPages, type ReplayWindow } from './replay-store.ts';
import { listHistoryRows } from './list-history-repository.ts';
import {
  RULE_TEST_LIMITS,
  RuleTestBusyError,
  RuleTestStoppedError,
  runRuleTest,
  type ReplayTask,
} from './replay-thread.ts';
import { claimTestLease, releaseTestLease } from './test-lease.ts';
import { IdParams, RuleTestSchema, SavedTestBody, TestBody } from './test-schemas.ts';

const DAY_MS = 86_400_000;
/** A test looks back 30 days unless told otherwise, and never over more than 400 (a year and its season). */
const DEFAULT_DAYS = 30;
const MAX_DAYS = 400;

/** The lists the condition and an expression cap name (the worker asks the compiled rule the same). */
const listsIn = (body: RuleBody): string[] => [
  ...new Set([...listsNamed(body.condition), ...(typeof body.cap === 'string' ? listsNamed(body.cap) : [])]),
];

const responses = {
  200: RuleTestSchema,
  ...problemResponses(400, 401, 403, 404, 409, 503),
};

/** A crashed holder's lease outlives the test it ran by this much at most. */
const LEASE_MARGIN_MS = 10_000;

const busy = (err: RuleTestBusyError) =>
  new ApiError('conflict', err.message, { headers: { 'retry-after': String(err.retryAfterSeconds) } });

/**
 * A stopped test is the caller's to change (a shorter window) or to retry: never a 500. Past its time
 * limit or failed in its worker: 503; cancelled: the caller is gone, 400 for the log.
 */
function stopped(err: RuleTestStoppedError): ApiError {
  if (err.reason === 'cancelled') return new ApiError('invalid_request', err.message);
  return new ApiError('unavailable', err.message, err.reason === 'failed' ? { headers: { 'retry-after': '5' } } : {});
}

/** The window [since, until): by default the 30 days before now (or before `until`); at most 400 days. */
function testWindow(body: { since?: string; until?: string }, now: number, owner: string | undefined): ReplayWindow {
  const until = parseTime(body.until, 'until') ?? now;
  const since = parseTime(body.since, 'since') ?? until - DEFAULT_DAYS * DAY_MS;
  const invalid = (field: string, message: string) =>
    new ApiError('validation_failed', `${field} ${message}.`, { errors: [{ field, message }] });
  if (since >= until) throw invalid('since', 'must be before until');
  if (until - since > MAX_DAYS * DAY_MS) throw invalid('since', `must be at most ${MAX_DAYS} days before until`);
  // a client replays its own decisions, as every other read of decisions (docs/api.md, "Whose data")
  return owner === undefined ? { since, until } : { since, until, owner };
}

export function ruleTestRoutes({ store, policies }: { store: Store; policies: PolicyRegistry }): RouteDefinition[] {
  const tags = ['rules'];

  const settingsFor = (environment: Environment, exclude: readonly Outcome[] = []): ReplaySettings => {
    const policy = policies.active(environment);
    // Decisions made before outcomes existed get the one the active policy gives their risk level.
    return {
      outcomes: { ...outcomesOf(policy) },
      signalNames: SIGNAL_NAMES,
      disputePrior: policy.disputePrior,
      exclude,
    };
  };

  async function run(
    environment: Environment,
    task: ReplayTask,
    window: ReplayWindow,
    reply: FastifyReply,
  ): Promise<Static<typeof RuleTestSchema>> {
    const source = storeSource(store);
    const lease = await claimTestLease(store.db, environment, Date.now(), RULE_TEST_LIMITS.timeMs + LEASE_MARGIN_MS);
    if (!lease) throw busy(new RuleTestBusyError());
    // the caller went away (its connection closed before the response): the test stops
    const gone = new AbortController();
    const onClose = () => {
      if (!reply.raw.writableFinished) gone.abort();
    };
    reply.raw.on('close', onClose);
    let result: RuleTestResult;
    try {
      result = await runRuleTest(
        environment,
        task,
        source
          ? { source, environment, window }
          : // An in-memory SQLite store cannot be opened twice: this thread reads, the worker replays.
            {
              entries: () => listHistoryRows(store.db, environment, listsIn(task.rule.body)),
              pages: replayPages(store.db, environment, window, columnsRead(task.rule.body)),
            },
        { signal: gone.signal },
      );
    } catch (err) {
      if (err instanceof RuleTestBusyError) throw busy(err);
      if (err instanceof RuleTestStoppedError) throw stopped(err);
      throw err;
    } finally {
      reply.raw.off('close', onClose);
      await releaseTestLease(store.db, lease);
    }
    return { since: new Date(window.since).toISOString(), until: new Date(window.until).toISOString(), ...result };
  }

  const checked = (body: RuleBody, lists: ReadonlyMap<string, string>): void => {
    const problems = checkRule(body, SIGNAL_NAMES, lists);
    if (problems.length === 0) return;
    const errors = problems.map((p) => ({ field: `rule.${p.field}`, message: p.message }));
    throw new ApiError(
      'validation_failed',
      `The rule does not check: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`,
      { errors },
    );
  };

  return [
    defineRoute({
      method: 'POST',
      url: '/api/v1/rules/test',
      config: { scope: 'rules:read', operationId: 'testRule' },
      schema: {
        tags,
        summary: 'Test a rule on the stored score decisions of a window, before saving it',
        body: TestBody,
        response: responses,
      },
      handler: async (request, reply) => {
        const environment = request.principal.environment;
        const window = testWindow(request.body, Date.now(), ownerFilter(request.principal));
        const body: RuleBody = request.body.rule;
        checked(body, await listKinds(store.db, environment));
        return run(
          environment,
          {
            rule: { id: UNSAVED_RULE_ID, version: 0, body },
            settings: settingsFor(environment, request.body.exclude_outcomes),
          },
          window,
          reply,
        );
      },
    }),

    defineRoute({
      method: 'POST',
      url: '/api/v1/rules/:id/test',
      config: { scope: 'rules:read', operationId: 'testStoredRule', bodyOptional: true },
      schema: {
        tags,
        summary: "Test a stored rule's current version on the stored score decisions of a window",
        params: IdParams,
        body: SavedTestBody,
        response: responses,
      },
      handler: async (request, reply) => {
        const environment = request.principal.environment;
        const window = testWindow(request.body, Date.now(), ownerFilter(request.principal));
        const row = await ruleToTest(store.db, environment, request.params.id);
        if (!row) throw new ApiError('not_found', 'No rule with this id in this environment.');
        const body = JSON.parse(row.body) as RuleBody;
        // A stored rule may name a list deleted since: the test sees each list as it was, so any name passes here.
        checked(body, new Map(listsIn(body).map((n) => [n, 'string'])));
        return run(
          environment,
          {
            rule: { id: row.id, version: Number(row.version), body },
            settings: settingsFor(environment, request.body.exclude_outcomes),
          },
          window,
          reply,
        );
      },
    }),
  ];
}
