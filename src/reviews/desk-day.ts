// The desk's day (docs/api.md, "Reviews", GET /api/v1/desk/day): per UTC day of the window, the
// outcomes, the fraud caught and the fraud money passed (from labels), the reviews opened and
// resolved; the backlog now; the rules that matched most; each analyst's resolutions and how often
// later labels agreed. Counts are grouped in the store and medians taken there (the middle rows by
// row_number); only the fraud money passed is read row by row, a page at a time, and the rule
// tally is the rule statistics' (rules/stats-thread.ts, off the event loop): memory stays bounded.
// The queries are the tables' owners': review-stats-repository.ts, audit/decision-stats-repository.ts
// and the names' (people, auth, keys).
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Store } from '../store/db.ts';
import type { Environment } from '../lib/principal.ts';
import { ruleStatsOff } from '../rules/stats-thread.ts';
import type { DeskDay } from './desk-schemas.ts';
import { assembleDays, topRules, type DecisionGroup } from './desk-figures.ts';
import { decisionDayGroups, fraudPassedPage } from '../audit/decision-stats-repository.ts';
import {
  analystResolutions,
  backlogCounts,
  middleResolutions,
  openedPerDay,
  resolvedPerDay,
  type MedianGroup,
  type ReviewWindow,
} from './review-stats-repository.ts';
import { actorIn, resolveActors } from '../audit-log/actors.ts';

const DAY_MS = 86_400_000;
const MAX_ANALYSTS = 100;
/** Rows of fraud passed read at a time. */
const PAGE = 1000;

type Window = ReviewWindow;
type Db = Kysely<Database>;
const num = (v: unknown): number => Number(v ?? 0);
const round4 = (n: number) => Math.round(n * 10_000) / 10_000;

/**
 * The median time to resolve (opened → resolved, minutes) per group of the window's resolutions, in
 * the store: only each group's one or two middle rows are read (middleResolutions).
 */
async function medianMinutes(db: Db, w: Window, group: MedianGroup): Promise<Map<string, number>> {
  const middle = await middleResolutions(db, w, group);
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
  const openedRows = await openedPerDay(db, w);
  const resolvedRows = await resolvedPerDay(db, w);
  return {
    opened: openedRows.map((r) => ({ day: num(r.day), n: num(r.n) })),
    resolved: resolvedRows.map((r) => ({ day: num(r.day), n: num(r.n), late: num(r.late) })),
  };
}

/** The backlog now: unresolved reviews, and those past due. */
async function backlogNow(db: Db, w: Window) {
  const row = await backlogCounts(db, w);
  return { open: num(row?.open), overdue: num(row?.overdue) };
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
  const medians = await medianMinutes(db, w, 'day');
  const overall = (await medianMinutes(db, w, 'all')).get('0') ?? null;
  const analysts = await analystResolutions(db, w, MAX_ANALYSTS);
  const names = await resolveActors(
    db,
    analysts.map((a) => a.resolved_by),
  );
  const analystMedians = await medianMinutes(db, w, 'analyst');
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
      const { name, type } = actorIn(names, id);
      return {
        id,
        name,
        type,
        resolved: num(a.resolved),
        median_minutes: analystMedians.get(id) ?? null,
        checked,
        agreement: checked === 0 ? null : round4(num(a.agreed) / checked),
      };
    }),
  };
}
