// The score's reads of the entity tables (docs/architecture.md, "Where things go", a table): the
// profile statement (aggregates, currency statistics, velocity buckets, the counterparty's trades,
// flagged neighbours and the network's matches, one round trip per score), the state a cached
// score or profile is checked against (docs/decisions.md, "Profiles in memory") and the fragments
// another owner's statement joins to read that state with its own row (audit/decision-repository.ts,
// a shared cache's answer). Neighbours are counted from identifier_stats, one row per identifier,
// so an identifier shared by twenty thousand entities costs what one shared by two does.
//
// trust/profile.ts, profile-cache.ts and answer-cache.ts compile each statement once per store and
// shape (store/prepared.ts) and map its rows. The network's tables sit above this folder: their
// parts come in as the network's own fragments (NetworkParts), which the caller hands in.
// Arguments are placeholders (store/prepared.ts), hence `unknown`.
import { sql, type RawBuilder } from 'kysely';

export interface ProfileRow {
  version: number | null;
  first_seen_at: number | null;
  last_event_at: number | null;
  trades_completed: number | null;
  trades_cancelled: number | null;
  disputes_opened: number | null;
  disputes_won: number | null;
  disputes_lost: number | null;
  chargebacks: number | null;
  fraud_reports: number | null;
  blocklisted: number | null;
  decay_at: number | null;
  d_trades_completed: number | null;
  d_trades_cancelled: number | null;
  d_disputes_lost: number | null;
  d_chargebacks: number | null;
  d_fraud_reports: number | null;
  d_disputes_lost_fraudulent: number | null;
  c_trades: number | null;
  c_volume: number | null;
  c_log_mean: number | null;
  c_log_m2: number | null;
  trades_hour: number | null;
  trades_day: number | null;
  volume_day: number | null;
  counterparty_trades: number | null;
  linked_flagged: number | null;
  linked_holders: number | null;
  last_trade_at: number | null;
  linked_version: number | null;
  own_identifiers: number | null;
  disputes_lost_third_party_payment: number | null;
  disputes_lost_fake_proof: number | null;
  disputes_lost_underpayment: number | null;
  disputes_lost_no_payment: number | null;
  network: string | null;
  net_version: number | string | null;
}

/** What the state columns read: the entity's version, its identifiers' version sum, the network's version. */
export interface StateRow {
  version: number | string | null;
  linked_version: number | string | null;
  net_version: number | string | null;
}

/** The network's parts of these statements, built by its owner (src/network) and handed in by the caller. */
export interface NetworkParts {
  /** the network's state version, a scalar subquery (network/publication-repository.ts networkVersionSql) */
  version: RawBuilder<unknown>;
  /**
   * the active peers' matches of the identifiers `keys` selects (rows of id_type, hash) and of the
   * entity's own id, as one JSON array text (network/match-repository.ts networkMatchesSql)
   */
  matches(env: unknown, keys: RawBuilder<unknown>, entityId: unknown): RawBuilder<string | null>;
}

/**
 * The identifiers a score looks at: the entity's stored ones and those the request names
 * (`pairs` are [type, hash, type, hash, ...] placeholders). UNION drops repeats. `env` is a bound
 * argument like the others, so one compiled shape serves both environments.
 */
function identifierKeys(env: unknown, id: unknown, pairs: unknown[]) {
  const viaRequest = Array.from(
    { length: pairs.length / 2 },
    (_, i) => sql`
    union select cast(${pairs[2 * i]} as text), cast(${pairs[2 * i + 1]} as text)`,
  );
  return sql`select m.id_type, m.hash from identifiers m where m.environment = ${env} and m.entity_id = ${id}${sql.join(viaRequest, sql``)}`;
}

/** Flagged holders and the version sum over those identifiers: one stats row each, by primary key. */
function linkage(env: unknown, id: unknown, pairs: unknown[]) {
  return sql`(select coalesce(sum(s.flagged_entities), 0) as flagged, coalesce(sum(s.entities), 0) as holders, coalesce(sum(s.version), 0) as version
      from (${identifierKeys(env, id, pairs)}) k join identifier_stats s on s.environment = ${env} and s.id_type = k.id_type and s.hash = k.hash)`;
}

/**
 * What the state (trust/profile.ts, LoadedProfile.state) is read from, for a statement to select
 * (`columns`: the StateRow columns) and join (`joins`, after its from clause): the entity's row as
 * e and the version sum of the identifiers the score looks at as l. Every state check reads it
 * this way: the state query, the profile cache's check and the shared cache's decision read.
 */
export function stateFragments(network: Pick<NetworkParts, 'version'>, env: unknown, id: unknown, pairs: unknown[]) {
  return {
    columns: sql<StateRow>`e.version, l.version as linked_version, ${network.version} as net_version`,
    joins: sql`left join entities e on e.environment = ${env} and e.entity_id = ${id}
      cross join ${linkage(env, id, pairs)} l`,
  };
}

/** The entity's completed trades with one counterparty (no row: none). */
export const counterpartyTradesSql = (env: unknown, id: unknown, counterparty: unknown) =>
  sql<{
    trades: number;
  }>`select cp.trades from entity_counterparties cp where cp.environment = ${env} and cp.entity_id = ${id} and cp.counterparty_id = ${counterparty}`;

/** The profile statement's arguments: placeholders, `pairs` as identifierKeys takes them. */
export interface ProfileArgs {
  env: unknown;
  id: unknown;
  currency: unknown;
  counterparty: unknown;
  /** the first velocity bucket of the last hour, and of the last day */
  hourFrom: unknown;
  dayFrom: unknown;
  pairs: unknown[];
}

/** Everything the model needs about one entity and the request's identifiers, in one statement. */
export function profileSql(network: NetworkParts, a: ProfileArgs): RawBuilder<ProfileRow> {
  const { env, id, currency, counterparty, hourFrom, dayFrom, pairs } = a;
  const state = stateFragments(network, env, id, pairs);
  return sql<ProfileRow>`
        select ${state.columns}, e.first_seen_at, e.last_event_at, e.trades_completed, e.trades_cancelled,
          e.disputes_opened, e.disputes_won, e.disputes_lost, e.chargebacks, e.fraud_reports, e.blocklisted,
          e.last_trade_at, e.decay_at, e.d_trades_completed, e.d_trades_cancelled, e.d_disputes_lost, e.d_chargebacks, e.d_fraud_reports, e.d_disputes_lost_fraudulent,
          e.disputes_lost_third_party_payment, e.disputes_lost_fake_proof, e.disputes_lost_underpayment, e.disputes_lost_no_payment,
          c.trades as c_trades, c.volume as c_volume, c.log_mean as c_log_mean, c.log_m2 as c_log_m2,
          (select cast(sum(h.trades) as double precision) from entity_hourly h where h.environment = ${env} and h.entity_id = ${id} and h.bucket >= ${hourFrom}) as trades_hour,
          (select cast(sum(h.trades) as double precision) from entity_hourly h where h.environment = ${env} and h.entity_id = ${id} and h.bucket >= ${dayFrom}) as trades_day,
          (select cast(sum(h.volume) as double precision) from entity_hourly h where h.environment = ${env} and h.entity_id = ${id} and h.bucket >= ${dayFrom} and h.currency = ${currency}) as volume_day,
          (${counterpartyTradesSql(env, id, counterparty)}) as counterparty_trades,
          l.flagged as linked_flagged, l.holders as linked_holders,
          (select count(*) from identifiers o where o.environment = ${env} and o.entity_id = ${id}) as own_identifiers,
          ${network.matches(env, identifierKeys(env, id, pairs), id)} as network
        from (select 1 as one) q ${state.joins}
        left join entity_currency c on c.environment = ${env} and c.entity_id = ${id} and c.currency = ${currency}
      `;
}

/** The state of an entity and the request's identifiers alone (validating a cached score): by primary keys. */
export function stateSql(network: Pick<NetworkParts, 'version'>, env: unknown, id: unknown, pairs: unknown[]) {
  const state = stateFragments(network, env, id, pairs);
  return sql<StateRow>`
      select ${state.columns} from (select 1 as one) q ${state.joins}`;
}

/** The entity's state (its own identifiers only) and its trade count with the counterparty, in one statement. */
export function stateAndCounterpartySql(
  network: Pick<NetworkParts, 'version'>,
  env: unknown,
  id: unknown,
  counterparty: unknown,
) {
  const state = stateFragments(network, env, id, []);
  return sql<StateRow & { counterparty_trades: number | string | null }>`
      select ${state.columns}, (${counterpartyTradesSql(env, id, counterparty)}) as counterparty_trades
      from (select 1 as one) q ${state.joins}`;
}
