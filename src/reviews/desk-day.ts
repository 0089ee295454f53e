// The desk's day (docs/api.md, "Reviews", GET /api/v1/desk/day): per UTC day of the window, the
// outcomes, the fraud caught and the fraud money passed (from labels), the reviews opened and
// resolved; the backlog now; the rules that matched most; each analyst's resolutions and how often
// later labels agreed. Counts are grouped in the store and medians taken there (the middle rows by
// row_number); only the fraud money passed is read row by row, a page at a time, and the rule
// tally is the rule statistics' (rules/stats-thread.ts, off the event loop): memory stays bounded.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Store } from '../store/db.ts';
import type { Environment } from '../lib/principal.ts';
import { chunks } from '../store/chunks.ts';
import { ruleStatsOff } from '../rules/stats-thread.ts';
import type { DeskDay } from './desk-schemas.ts';
import { assembleDays, topRules, type DecisionGroup } from './desk-figures.ts';
import { decisionDayGroups, fraudPassedPage } from '../audit/decision-stats-repository.ts';

const DAY_MS = 86_400_000;
const MAX_ANALYSTS = 100;
/** Rows of fraud passed read at a time. */
const PAGE = 1000;

interface Window {
  environment: Environment;
  /** the caller's client, or undefined for every client's (an admin, a person) */
  owner: string | undefined;
  /** the first UTC midnight of the window */
  since: number;
  now: number;
}

type Db = Kysely<Database>;
const num = (v: unknown): number => Number(v ?? 0);
const round4 = (n: number) => Math.round(n * 10_000) / 10_000;

/** The UTC day number of a time column: integer division on both stores (times are never negative). */
const dayNumber = (column: string): RawBuilder<number> => sql<number>`${sql.ref(column)} / ${sql.lit(DAY_MS)}`;

/** The reviews the caller may see. */
function reviewsOf(db: Db, w: Window) {
  return db
    .selectFrom('reviews')
    .where('reviews.environment', '=', w.environment)
    .$if(w.owner !== undefined, (q) => q.where('reviews.owner_client_id', '=', w.owner!));
}

/** Reviews resolved in the window. */
const resolvedIn = (db: Db, w: Window) =>
  reviewsOf(db, w).where('reviews.status', '=', 'resolved').where('reviews.resolved_at', '>=', w.since);

/**
 * The median time to resolve (opened → resolved, minutes) per group of the window's resolutions, in
 * the store: each group's rows numbered by duration; the one or two middle rows (2·rn between n and
 * n + 2) are the only ones read.
 */
async function medianMinutes(db: Db, w: Window, group: RawBuilder<unknown>): Promise<Map<string, number>> {
  const ranked = resolvedIn(db, w).select([
    group.as('g'),
    sql<number>`reviews.resolved_at - reviews.opened_at`.as('ms'),
  ]);
  const numbered = db.selectFrom(ranked.as('r')).select((eb) => [
    'r.g',
    'r.ms',
    eb.fn
      .agg<number>('row_number', [])
      .over((ob) => ob.partitionBy('r.g').orderBy('r.ms'))
      .as('rn'),
    eb.fn
      .countAll<number>()
      .over((ob) => ob.partitionBy('r.g'))
      .as('n'),
  ]);
  const middle = await db
    .selectFrom(numbered.as('x'))
    .select(['x.g', 'x.ms'])
    .where(sql<boolean>`2 * x.rn >= x.n and 2 * x.rn <= x.n + 2`)
    .execute();
  const sums = new Map<string, { ms: number; n: number }>();
  for (const m of middle) {
    const key = String(m.g);
    const s = sums.get(key) ?? { ms: 0, n: 0 };
    sums.set(key, { ms: s.ms + num(m.ms), n: s.n + 1 });
  }
  return new Map([...sums].map(([k, s]) => [k, Math.round(s.ms / s.n / 6_000) / 10]));
}

/** Score decisions per day, outcome, label and their review's verdict: the outcomes and the labelled ones' fates. */
async function decisionGroups(db: Db, w: Window): Promise<DecisionGroup[]> {
  const rows = await decisionDayGroups(db, w);
  return rows.map((r) => ({
    day: num(r.day),
    outcome: r.outcome ?? null,
    label: r.label ?? null,
    resolution: r.resolution ?? null,
    n: num(r.n),
  }));
}

/**
 * Fraud money passed, per day and currency: fraud-labelled decisions that were approved, or sent to a
 * review that approved them. Read a page at a time (by time and id): the amount is in the request's JSON.
 */
async function fraudPassed(db: Db, w: Window): Promise<Map<number, Map<string, number>>> {
  const out = new Map<number, Map<string, number>>();
  let after: { at: number; id: string } | undefined;
  for (;;) {
    const rows = await fraudPassedPage(db, w, after, PAGE);
    for (const r of rows) {
      const money = requestMoney(r.request);
      if (!money) continue;
      const day = Math.floor(num(r.created_at) / DAY_MS);
      const byCurrency = out.get(day) ?? new Map<string, number>();
      byCurrency.set(money.currency, (byCurrency.get(money.currency) ?? 0) + money.amount);
      out.set(day, byCurrency);
    }
    if (rows.length < PAGE) return out;
    const last = rows[rows.length - 1]!;
    after = { at: num(last.created_at), id: last.id };
  }
}

function requestMoney(text: string | null | undefined): { amount: number; currency: string } | undefined {
  if (!text) return undefined;
  try {
    const r = JSON.parse(text) as { amount?: unknown; currency?: unknown };
    return typeof r.amount === 'number' && Number.isFinite(r.amount) && typeof r.currency === 'string'
      ? { amount: r.amount, currency: r.currency }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Reviews opened per day, and resolved per day with those resolved after their due time. */
async function reviewDays(db: Db, w: Window) {
  const opened = dayNumber('reviews.opened_at');
  const resolved = dayNumber('reviews.resolved_at');
  const openedRows = await reviewsOf(db, w)
    .select((eb) => [opened.as('day'), eb.fn.countAll<number>().as('n')])
    .where('reviews.opened_at', '>=', w.since)
    .groupBy(opened)
    .execute();
  const resolvedRows = await resolvedIn(db, w)
    .select((eb) => [
      resolved.as('day'),
      eb.fn.countAll<number>().as('n'),
      eb.fn
        .sum<number>(eb.case().when('reviews.resolved_at', '>', eb.ref('reviews.due_at')).then(1).else(0).end())
        .as('late'),
    ])
    .groupBy(resolved)
    .execute();
  return {
    opened: openedRows.map((r) => ({ day: num(r.day), n: num(r.n) })),
    resolved: resolvedRows.map((r) => ({ day: num(r.day), n: num(r.n), late: num(r.late) })),
  };
}

/** The backlog now: unresolved reviews, and those past due. */
async function backlogNow(db: Db, w: Window) {
  const row = await reviewsOf(db, w)
    .select((eb) => [
      eb.fn.countAll<number>().as('open'),
      eb.fn.sum<number>(eb.case().when('reviews.due_at', '<', w.now).then(1).else(0).end()).as('overdue'),
    ])
    .where('reviews.status', '<>', 'resolved')
    .executeTakeFirst();
  return { open: num(row?.open), overdue: num(row?.overdue) };
}

/**
 * Each analyst's resolutions in the window, most first: how many, and of those whose decision was later
 * labelled by an event or the API, how many agreed (decline ↔ fraud, approve ↔ legit: the fit's measure).
 */
async function analystRows(db: Db, w: Window) {
  const checked = sql<boolean>`decisions.label_source in ('event', 'api') and decisions.label in ('fraud', 'legit')`;
  const agreed = sql<boolean>`(reviews.resolution = 'decline' and decisions.label = 'fraud') or (reviews.resolution = 'approve' and decisions.label = 'legit')`;
  return resolvedIn(db, w)
    .innerJoin('decisions', 'decisions.id', 'reviews.decision_id')
    .select((eb) => [
      'reviews.resolved_by',
      eb.fn.countAll<number>().as('resolved'),
      eb.fn.sum<number>(eb.case().when(checked).then(1).else(0).end()).as('checked'),
      eb.fn
        .sum<number>(eb.case().when(checked).then(eb.case().when(agreed).then(1).else(0).end()).else(0).end())
        .as('agreed'),
    ])
    .where('reviews.resolved_by', 'is not', null)
    .groupBy('reviews.resolved_by')
    .orderBy(sql`count(*)`, 'desc')
    .orderBy('reviews.resolved_by')
    .limit(MAX_ANALYSTS)
    .execute();
}

/**
 * Who a principal id is: a person (users) by name, else a machine client or API key by its name. The
 * people repository reads users one by one; this reads the analysts' names in one query per table.
 */
async function principalNames(db: Db, ids: string[]): Promise<Map<string, { name: string; type: 'user' | 'client' }>> {
  const out = new Map<string, { name: string; type: 'user' | 'client' }>();
  for (const part of chunks(ids)) {
    for (const u of await db.selectFrom('users').select(['id', 'name']).where('id', 'in', part).execute())
      out.set(u.id, { name: u.name, type: 'user' });
    for (const c of await db.selectFrom('clients').select(['id', 'name']).where('id', 'in', part).execute())
      if (!out.has(c.id)) out.set(c.id, { name: c.name, type: 'client' });
    for (const k of await db.selectFrom('api_keys').select(['id', 'name']).where('id', 'in', part).execute())
      if (!out.has(k.id)) out.set(k.id, { name: k.name, type: 'client' });
  }
  return out;
}

/** The desk's day over the last `days` UTC days (today included); `owner` undefined: every client's. */
export async function deskDay(
  store: Store,
  environment: Environment,
  owner: string | undefined,
  days: number,
  now: number,
): Promise<DeskDay> {
  const db = store.db;
  const w: Window = { environment, owner, since: (Math.floor(now / DAY_MS) - days + 1) * DAY_MS, now };
  // the rule tally runs in its thread meanwhile; the queries run one after another (one connection)
  const rules = ruleStatsOff(store, environment, days, now, owner);
  rules.catch(() => {}); // awaited below: a failure is the answer's, not an unhandled rejection
  const groups = await decisionGroups(db, w);
  const passed = await fraudPassed(db, w);
  const reviews = await reviewDays(db, w);
  const backlog = await backlogNow(db, w);
  const medians = await medianMinutes(db, w, dayNumber('reviews.resolved_at'));
  const overall = (await medianMinutes(db, w, sql`0`)).get('0') ?? null;
  const analysts = await analystRows(db, w);
  const names = await principalNames(
    db,
    analysts.map((a) => a.resolved_by!),
  );
  const analystMedians = await medianMinutes(db, w, sql`reviews.resolved_by`);
  const stats = await rules;
  const resolved = reviews.resolved.reduce((n, r) => n + r.n, 0);
  const late = reviews.resolved.reduce((n, r) => n + r.late, 0);
  return {
    since: new Date(w.since).toISOString(),
    until: new Date(now).toISOString(),
    days: assembleDays(w.since, days, { groups, passed, reviews, medians, open: backlog.open }),
    backlog: {
      ...backlog,
      resolved,
      median_minutes_to_resolve: overall,
      resolved_on_time_share: resolved === 0 ? null : round4((resolved - late) / resolved),
    },
    top_rules: topRules(stats.data),
    rules_truncated: stats.truncated,
    analysts: analysts.map((a) => {
      const id = a.resolved_by!;
      const checked = num(a.checked);
      return {
        id,
        name: names.get(id)?.name ?? id,
        type: names.get(id)?.type ?? 'client',
        resolved: num(a.resolved),
        median_minutes: analystMedians.get(id) ?? null,
        checked,
        agreement: checked === 0 ? null : round4(num(a.agreed) / checked),
      };
    }),
  };
}
