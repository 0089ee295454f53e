// The activation confirmation of the policies page: what the version would decide, replayed on the
// stored decisions (its backtest), and, when the share flagged high+ moves beyond the server's
// limits (a 409 with operating_point), the move itself and a second click to confirm.
import { useState } from 'preact/hooks';
import { HeldForApproval, type ApiProblem } from '../api.ts';
import { vouch } from '../api-client.ts';
import type { Change } from '../people-types.ts';
import { Confirm, ErrorBox, Loader, fmtNumber, fmtPercent, toProblem, useLoad } from '../ui.tsx';
import { LEVELS } from '../types.ts';
import { MetricsHead, MetricsRow, type Metrics } from './policy-report.tsx';

export interface Backtest {
  version: string;
  decisions: number;
  labelled: number;
  metrics: Metrics;
  levels: Record<string, Record<string, number>>;
  /** per level under the replayed policy, on the labelled decisions (absent from older servers) */
  thresholds?: LevelFigure[];
}

interface LevelFigure {
  risk_level: string;
  min_score: number;
  flagged: number;
  share_flagged: number | null;
  frauds_caught: number;
  recall: number | null;
  false_positive_rate: number | null;
  precision: number | null;
}

/** How many stored decisions would move from each decided level to each level under this policy. */
function LevelChanges({ levels }: { levels: Record<string, Record<string, number>> }) {
  const moved = LEVELS.reduce(
    (n, from) => n + LEVELS.reduce((m, to) => m + (from !== to ? (levels[from]?.[to] ?? 0) : 0), 0),
    0,
  );
  return (
    <div class="table-wrap">
      <table class="matrix">
        <caption>
          Level changes: rows as decided, columns under this policy ({fmtNumber(moved)} decisions change level)
        </caption>
        <thead>
          <tr>
            <th scope="col">decided ↓ / new →</th>
            {LEVELS.map((l) => (
              <th key={l} scope="col" class="num">
                {l}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {LEVELS.map((from) => (
            <tr key={from}>
              <th scope="row">{from}</th>
              {LEVELS.map((to) => {
                const n = levels[from]?.[to] ?? 0;
                return (
                  <td key={to} class={`num ${n && from !== to ? 'changed' : ''}`}>
                    {fmtNumber(n)}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const BacktestMetrics = ({ b }: { b: Backtest }) => (
  <div class="table-wrap">
    <table class="stack">
      <caption>Metrics on the labelled decisions</caption>
      <MetricsHead />
      <tbody>
        <MetricsRow name={b.version} m={b.metrics} />
      </tbody>
    </table>
  </div>
);

export function BacktestView({ b }: { b: Backtest }) {
  return (
    <>
      <p>
        {fmtNumber(b.decisions)} stored score decisions replayed, {fmtNumber(b.labelled)} of them labelled.
      </p>
      <LevelChanges levels={b.levels} />
      <BacktestMetrics b={b} />
    </>
  );
}

interface OperatingMove {
  decisions: number;
  before: { version: string; share_flagged_high: number };
  after: { version: string; share_flagged_high: number };
}

const pct = (x: number): string => `${(100 * x).toFixed(1)} %`;

/**
 * The active policy and the candidate replayed on the same stored decisions, side by side: the
 * metrics, and per level the threshold, how many are flagged, precision and recall.
 */
function SideBySide({ active, candidate }: { active: Backtest; candidate: Backtest }) {
  const levels = LEVELS.filter((l) => l !== 'low');
  const figure = (b: Backtest, level: string) => b.thresholds?.find((t) => t.risk_level === level);
  const cells = (name: string, f: LevelFigure | undefined) => [
    <td key={`${name}-min`} data-label={`${name}: from score`} class="num">
      {fmtNumber(f?.min_score)}
    </td>,
    <td key={`${name}-flagged`} data-label={`${name}: flagged`} class="num">
      {f ? `${fmtNumber(f.flagged)} (${fmtPercent(f.share_flagged)})` : '—'}
    </td>,
    <td key={`${name}-precision`} data-label={`${name}: precision`} class="num">
      {fmtPercent(f?.precision)}
    </td>,
    <td key={`${name}-recall`} data-label={`${name}: recall`} class="num">
      {fmtPercent(f?.recall)}
    </td>,
  ];
  return (
    <>
      <div class="table-wrap">
        <table class="stack compare-metrics">
          <caption>Metrics on the labelled decisions: the active policy against {candidate.version}</caption>
          <MetricsHead />
          <tbody>
            <MetricsRow name={`${active.version} (active)`} m={active.metrics} />
            <MetricsRow name={`${candidate.version} (candidate)`} m={candidate.metrics} />
          </tbody>
        </table>
      </div>
      {active.thresholds && candidate.thresholds && (
        <div class="table-wrap">
          <table class="stack compare-levels">
            <caption>
              Per level on the {fmtNumber(candidate.labelled)} labelled decisions: active ({active.version}) against
              candidate ({candidate.version})
            </caption>
            <thead>
              <tr>
                <th scope="col">Level</th>
                {['Active', 'Candidate'].flatMap((w) => [
                  <th key={`${w}1`} scope="col" class="num">
                    {w}: from score
                  </th>,
                  <th key={`${w}2`} scope="col" class="num">
                    {w}: flagged
                  </th>,
                  <th key={`${w}3`} scope="col" class="num">
                    {w}: precision
                  </th>,
                  <th key={`${w}4`} scope="col" class="num">
                    {w}: recall
                  </th>,
                ])}
              </tr>
            </thead>
            <tbody>
              {levels.map((l) => (
                <tr key={l}>
                  <th scope="row" data-label="Level">
                    {l}
                  </th>
                  {cells('Active', figure(active, l))}
                  {cells('Candidate', figure(candidate, l))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/**
 * Both replays, one after the other: fits and backtests run one at a time per environment (a second at once gets 409).
 */
async function replayBoth(
  version: string,
  active: string | undefined,
): Promise<{ candidate: Backtest; active?: Backtest }> {
  const candidate = await backtestOf(version);
  return active && active !== version ? { candidate, active: await backtestOf(active) } : { candidate };
}

/** POST .../backtest over the default window (its answer is `unknown` in the OpenAPI document). */
export const backtestOf = async (version: string): Promise<Backtest> =>
  (await vouch.POST('/api/v1/policies/{version}/backtest', { params: { path: { version } }, body: {} })) as Backtest;

/**
 * Activation after a confirmation: the backtest's level changes, and a second click when the operating point moves (409
 * operating_point). `onClose` gets true once active, the pending change when four eyes holds the activation.
 */
export function Activate({
  version,
  active,
  onClose,
}: {
  version: string;
  active: string | undefined;
  onClose: (done: boolean | Change) => void;
}) {
  const bt = useLoad(() => replayBoth(version, active), [version, active]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiProblem>();
  // A 409 with operating_point: the share flagged high+ moves beyond the limits; a second click confirms.
  const [move, setMove] = useState<OperatingMove>();
  return (
    <Confirm
      title={`Activate policy ${version}?`}
      confirmLabel={move ? 'Activate anyway' : 'Activate'}
      wide
      busy={busy || bt.loading}
      onCancel={() => onClose(false)}
      onConfirm={async () => {
        setBusy(true);
        try {
          await vouch.POST('/api/v1/policies/{version}/activate', {
            params: { path: { version } },
            body: move ? { confirm: true } : {},
          });
          onClose(true);
        } catch (err) {
          if (err instanceof HeldForApproval) return onClose(err.change);
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
      <p>
        Every instance scores with it from its next request on; the active policy is retired. Replayed on the stored
        decisions, it would decide:
      </p>
      <Loader state={bt} feature="Backtesting">
        {(b) => (
          <>
            <p>
              {fmtNumber(b.candidate.decisions)} stored score decisions replayed, {fmtNumber(b.candidate.labelled)} of
              them labelled.
            </p>
            <LevelChanges levels={b.candidate.levels} />
            {b.active ? <SideBySide active={b.active} candidate={b.candidate} /> : <BacktestMetrics b={b.candidate} />}
          </>
        )}
      </Loader>
      {move && (
        <p role="alert" class="attention" data-testid="operating-point-move">
          The operating point moves: {move.after.version} would flag {pct(move.after.share_flagged_high)} of the{' '}
          {move.decisions} most recent decisions high or above, against {pct(move.before.share_flagged_high)} under{' '}
          {move.before.version}. Confirm to activate it anyway.
        </p>
      )}
      <ErrorBox error={error} what="Could not activate" />
    </Confirm>
  );
}
