// The desk's day as the route answers it (docs/api.md, "Reviews", GET /api/v1/desk/day): the schema
// the response is serialised with, and its type, which the figures are built as.
import { Type, type Static } from 'typebox';
import { STATS_MAX_ROWS } from '../rules/stats.ts';

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T, description: string) =>
  Type.Union([t, Type.Null()], { description });
const Count = (description: string) => Type.Integer({ minimum: 0, description });
const share = (description: string) => nullable(Type.Number({ minimum: 0, maximum: 1 }), description);

const DaySchema = Type.Object({
  day: Type.String({ description: 'the UTC day, YYYY-MM-DD' }),
  approve: Count('score decisions of the day with this outcome'),
  review: Count('score decisions of the day with this outcome'),
  hold: Count('score decisions of the day with this outcome'),
  decline: Count('score decisions of the day with this outcome'),
  fraud_caught: Count("the day's decisions labelled fraud that were declined, outright or by their review's decline"),
  fraud_money_passed: Type.Record(Type.String(), Type.Number(), {
    description:
      "currency → the amount of the day's decisions labelled fraud that were approved, outright or by their review",
  }),
  legit_declined: Count("the day's decisions labelled legit that were declined, outright or by their review's decline"),
  reviews_opened: Count('reviews opened that day'),
  reviews_resolved: Count('reviews resolved that day'),
  resolved_late: Count('of those, resolved after their due_at'),
  median_minutes_to_resolve: nullable(Type.Number(), "opened to resolved, over the day's resolutions; null when none"),
  open_at_end: Count('unresolved reviews at the end of the day (now, for today)'),
});

export const DeskDaySchema = Type.Object({
  since: Type.String({ format: 'date-time', description: 'the first UTC midnight of the window' }),
  until: Type.String({ format: 'date-time' }),
  days: Type.Array(DaySchema, { description: 'every UTC day of the window, oldest first' }),
  backlog: Type.Object({
    open: Count('unresolved reviews now'),
    overdue: Count('unresolved and past due_at'),
    resolved: Count('reviews resolved in the window'),
    median_minutes_to_resolve: nullable(Type.Number(), "opened to resolved, over the window's resolutions"),
    resolved_on_time_share: share("the window's resolutions made by their due_at; null when none"),
  }),
  top_rules: Type.Array(
    Type.Object({ rule_id: Type.String(), name: Type.String(), hits: Count('score decisions it matched') }),
    { description: 'the active rules that matched most in the window, at most 10, most first' },
  ),
  rules_truncated: Type.Boolean({
    description: `the window held more than ${STATS_MAX_ROWS.toLocaleString('en')} decisions with a matched rule: the hits count the newest`,
  }),
  analysts: Type.Array(
    Type.Object({
      id: Type.String({ description: 'the principal who resolved: a user id, a client id or an API key id' }),
      name: Type.String({ description: "the person's or the client's (key's) name; the id when unknown" }),
      type: Type.Union([Type.Literal('user'), Type.Literal('client')]),
      resolved: Count('reviews they resolved in the window'),
      median_minutes: nullable(Type.Number(), 'opened to their verdict, median'),
      checked: Count('of their resolutions, those whose decision was later labelled by an event or the API'),
      agreement: share('the share of those whose label agreed with the verdict (decline ↔ fraud); null when none'),
    }),
    { description: 'who resolved reviews in the window, most first, at most 100' },
  ),
});

export type DeskDay = Static<typeof DeskDaySchema>;
