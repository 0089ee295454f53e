// The activation confirmation of the policies page: what the version would decide, replayed on the
// stored decisions (its backtest), and, when the share flagged high+ moves beyond the server's
// limits (a 409 with operating_point), the move itself and a second click to confirm.
import { useState } from 'preact/hooks';
import { api, type ApiProblem } from '../api.ts';
import { Confirm, ErrorBox, Loader, fmtNumber, toProblem, useLoad } from '../ui.tsx';
import { LEVELS } from '../types.ts';
import { MetricsHead, MetricsRow, type Metrics } from './policy-report.tsx';

export interface Backtest {
  version: string;
  decisions: number;
  labelled: number;
  metrics: Metrics;
  levels: Record<string, Record<string, number>>;
}

/** How many stored decisions would move from each decided level to each level under this policy. */
function LevelChanges({ levels }: { levels: Record<string, Record<string, number>> }) {
  const moved = LEVELS.reduce((n, from) => n + LEVELS.reduce((m, to) => m + (from !== to ? (levels[from]?.[to] ?? 0) : 0), 0), 0);
  return (
    <div class="table-wrap">
      <table class="matrix">
        <caption>Level changes: rows as decided, columns under this policy ({fmtNumber(moved)} decisions change level)</caption>
        <thead><tr><th scope="col">decided ↓ / new →</th>{LEVELS.map((l) => <th key={l} scope="col" class="num">{l}</th>)}</tr></thead>
        <tbody>
          {LEVELS.map((from) => (
            <tr key={from}>
              <th scope="row">{from}</th>
              {LEVELS.map((to) => {
                const n = levels[from]?.[to] ?? 0;
                return <td key={to} class={`num ${n && from !== to ? 'changed' : ''}`}>{fmtNumber(n)}</td>;
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function BacktestView({ b }: { b: Backtest }) {
  return (
    <>
      <p>{fmtNumber(b.decisions)} stored score decisions replayed, {fmtNumber(b.labelled)} of them labelled.</p>
      <LevelChanges levels={b.levels} />
      <div class="table-wrap"><table><caption>Metrics on the labelled decisions</caption><MetricsHead /><tbody><MetricsRow name={b.version} m={b.metrics} /></tbody></table></div>
    </>
  );
}

interface OperatingMove {
  decisions: number;
  before: { version: string; share_flagged_high: number };
  after: { version: string; share_flagged_high: number };
}

const pct = (x: number): string => `${(100 * x).toFixed(1)} %`;

/** Activation after a confirmation: the backtest's level changes, and a second click when the operating point moves (409 operating_point). */
export function Activate({ version, onClose }: { version: string; onClose: (done: boolean) => void }) {
  const bt = useLoad(() => api<Backtest>('POST', `/api/v1/policies/${encodeURIComponent(version)}/backtest`, {}), [version]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiProblem>();
  // A 409 with operating_point: the share flagged high+ moves beyond the limits; a second click confirms.
  const [move, setMove] = useState<OperatingMove>();
  return (
    <Confirm
      title={`Activate policy ${version}?`}
      confirmLabel={move ? 'Activate anyway' : 'Activate'}
      busy={busy || bt.loading}
      onCancel={() => onClose(false)}
      onConfirm={async () => {
        setBusy(true);
        try {
          await api('POST', `/api/v1/policies/${encodeURIComponent(version)}/activate`, move ? { confirm: true } : {});
          onClose(true);
        } catch (err) {
          const problem = toProblem(err);
          const op = problem.extra?.operating_point as OperatingMove | undefined;
          if (problem.status === 409 && op && !move) {
            setMove(op);
            setError(undefined);
          } else setError(problem);
          setBusy(false);
        }
      }}
    >
      <p>Every instance scores with it from its next request on; the active policy is retired. Replayed on the stored decisions, it would decide:</p>
      <Loader state={bt} feature="Backtesting">{(b) => <BacktestView b={b} />}</Loader>
      {move && (
        <p role="alert" class="attention" data-testid="operating-point-move">
          The operating point moves: {move.after.version} would flag {pct(move.after.share_flagged_high)} of the {move.decisions} most recent
          decisions high or above, against {pct(move.before.share_flagged_high)} under {move.before.version}. Confirm to activate it anyway.
        </p>
      )}
      <ErrorBox error={error} what="Could not activate" />
    </Confirm>
  );
}
