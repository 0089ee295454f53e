// The pieces of a decision both lists and both decision pages show: what was asked (amount,
// currency, a dispute's reason), a safe amount in words, and the network peers behind network_flags.
import { hasScope } from '../api.ts';
import { Link, fmtMoney, fmtNumber } from '../ui.tsx';
import { isDispute, type Decision, type Signal } from '../types.ts';

/** What a score was asked, as the decision record keeps it (null for decisions stored before it was kept). */
export interface ScoreRequest {
  amount?: number;
  currency?: string;
  payment_method?: string;
  side?: string;
}

/** What a dispute analysis was asked, as the decision record keeps it (null for analyses stored before it was kept). */
export interface DisputeRequest {
  trade?: { trade_id?: string; amount?: number; currency?: string; payment_method?: string };
  reason?: string;
  opened_by?: string;
  opened_at?: string;
  evidence?: Record<string, boolean | number>;
}

export const disputeRequest = (d: Decision): DisputeRequest | null =>
  isDispute(d) ? ((d.request ?? null) as DisputeRequest | null) : null;
/** snake_case API words as text ("asset_not_released" → "asset not released") */
export const words = (s: string | undefined): string | undefined => s?.replace(/_/g, ' ');

/**
 * The amount and currency asked: a score's request, a dispute's trade; "not recorded" for decisions stored before
 * requests were kept.
 */
export function tradeAmount(d: Decision) {
  const asked = isDispute(d) ? disputeRequest(d)?.trade : ((d.request ?? null) as ScoreRequest | null);
  if (asked?.amount === undefined) return <span class="muted">not recorded</span>;
  return <span class="nowrap">{fmtMoney(asked.amount, asked.currency)}</span>;
}

/**
 * A safe amount: the largest amount that would still score below `high` (docs/api.md, "Trust
 * scoring"). The score response names no currency, so without the request's currency the amount is
 * said to be in it rather than guessed. 0 reads like a missing figure, so it says what it means.
 */
export function SafeAmount({
  amount,
  currency,
  of = 'scored',
}: {
  amount: number | null;
  currency?: string | undefined;
  of?: 'scored' | "trade's";
}) {
  if (amount === null)
    return (
      <span title="no amount in this currency would score high: the amount is not what makes this entity risky">
        no limit
      </span>
    );
  const figure = currency ? (
    <>{fmtMoney(amount, currency)}</>
  ) : (
    <>
      {fmtNumber(amount)} <small class="muted">in the {of} currency</small>
    </>
  );
  if (amount > 0) return figure;
  return (
    <>
      {figure}{' '}
      <small class="muted safe-zero">
        no amount would score below high: without the amount, its history and the trade's context already score high
      </small>
    </>
  );
}

/**
 * The Vouch Network peers whose flags made up network_flags, as the decision stored them. Shown is
 * each peer's part of the signal's value — the stored contributions scaled to add up to it, so a
 * peer never reads "1" beside a value of 0.5 — and its log-odds under the decision's weight
 * (docs/network.md, "The signal").
 */
export function NetworkPeers({
  peers,
  signal,
}: {
  peers: NonNullable<Decision['network_peers']>;
  signal: Signal | undefined;
}) {
  const admin = hasScope('network:admin');
  const stored = peers.reduce((n, p) => n + p.contribution, 0);
  const value = signal?.value ?? 0;
  return (
    <section aria-labelledby="h-decision-network">
      <h2 id="h-decision-network">Flagged by other marketplaces</h2>
      <p class="muted">
        The peers whose flags on one of this entity's identifiers made up <span class="mono">network_flags</span>
        {signal ? (
          <>
            {' '}
            = {fmtNumber(value)}, × weight {fmtNumber(signal.weight)} = {value * signal.weight > 0 ? '+' : ''}
            {fmtNumber(value * signal.weight)} log-odds
          </>
        ) : null}
        . A peer's part grows with the weight this deployment gives it and fades with the age of its flags; one peer
        alone reaches half the full value at most, only independent peers agreeing reach all of it.
      </p>
      <ul class="peers-list">
        {peers.map((p) => {
          const share = stored > 0 ? (value * p.contribution) / stored : 0;
          return (
            <li key={p.id} class="network-peer">
              {admin ? <Link to="/network">{p.name}</Link> : p.name}
              {signal && (
                <>
                  : <strong>{fmtNumber(share)}</strong> of the signal's {fmtNumber(value)} (
                  {share * signal.weight > 0 ? '+' : ''}
                  {fmtNumber(share * signal.weight)} log-odds)
                </>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
