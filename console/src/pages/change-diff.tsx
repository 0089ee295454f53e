// What approving a pending change would do, beside how things are now: a rule's condition (and its
// other fields) before and after, a policy's thresholds and weights against the active policy's, the
// list a deletion removes. Read from the change's payload (what its request asked for) and the current
// state; a decided change shows only what was asked.
import type { ComponentChildren } from 'preact';
import { hasScope } from '../api.ts';
import { vouch } from '../api-client.ts';
import { CompactDiff } from '../diff.tsx';
import type { Change } from '../people-types.ts';
import type { PolicyDetail } from '../types.ts';
import { Link, Loader, fmtNumber, useLoad } from '../ui.tsx';
import { listsApi, rulesApi, type RuleBody, type RuleStatus } from './rules-api.ts';

const enc = encodeURIComponent;
const policy = (version: string) => vouch.GET('/api/v1/policies/{version}', { params: { path: { version } } });
const nameOf = (target: string): string => target.slice(target.indexOf(':') + 1);

interface RulePayload {
  patch?: Partial<RuleBody> & { status?: RuleStatus };
  reason?: string | null;
  base_version?: number;
}

/** The most weights listed before the rest fold away: the largest moves first. */
const WEIGHTS_SHOWN = 10;

export function ChangeDiff({ change }: { change: Change }) {
  if (change.kind === 'rule_activation') return <RuleDiff change={change} />;
  if (change.kind === 'policy_activation') return <PolicyDiff change={change} />;
  return <ListDeletion change={change} />;
}

function Asked({ payload }: { payload: unknown }) {
  return (
    <div class="asked">
      <span class="muted">Asked for: </span>
      <CompactDiff after={payload} />
    </div>
  );
}

function RuleDiff({ change }: { change: Change }) {
  const id = nameOf(change.target);
  const payload = (change.payload ?? {}) as RulePayload;
  const patch = payload.patch ?? {};
  const pending = change.status === 'pending';
  const rule = useLoad(async () => (pending && hasScope('rules:read') ? rulesApi.get(id) : undefined), [id, pending]);
  const link = <Link to={`/rules/${enc(id)}`}>{rule.data?.name ?? id}</Link>;
  if (!pending || !rule.data)
    return (
      <div class="change-diff">
        <p>Rule {link}</p>
        {rule.error && <p class="muted">The rule could not be read ({rule.error.detail}).</p>}
        {Object.keys(patch).length > 0 ? <Asked payload={patch} /> : <Asked payload={change.payload} />}
      </div>
    );
  const r = rule.data;
  const { condition, status, ...rest } = patch;
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) {
    const now = (r as unknown as Record<string, unknown>)[k] ?? null;
    if (JSON.stringify(now) !== JSON.stringify(v ?? null)) {
      before[k] = now;
      after[k] = v;
    }
  }
  const conditionChanges = condition !== undefined && condition !== r.condition;
  return (
    <div class="change-diff">
      <p>
        Rule {link}, version {r.version}: <span class={`badge status-${r.status}`}>{r.status}</span>
        {status && status !== r.status && (
          <>
            {' '}
            → <span class={`badge status-${status}`}>{status}</span>
          </>
        )}
        {payload.reason && <span class="muted"> · why: {payload.reason}</span>}
      </p>
      {payload.base_version !== undefined && payload.base_version !== r.version && (
        <p class="attention" role="note">
          The rule has changed since this was asked (version {payload.base_version} then, {r.version} now): approving it
          will be refused. Reject it and ask again.
        </p>
      )}
      <div class="condition-diff">
        <figure>
          <figcaption>{conditionChanges ? 'Condition now' : 'Condition (unchanged)'}</figcaption>
          <pre class={conditionChanges ? 'mono old' : 'mono'}>{r.condition}</pre>
        </figure>
        {conditionChanges && (
          <figure>
            <figcaption>Condition after approval</figcaption>
            <pre class="mono new">{condition}</pre>
          </figure>
        )}
      </div>
      {Object.keys(after).length > 0 && (
        <div class="asked">
          <span class="muted">Other fields: </span>
          <CompactDiff before={before} after={after} />
        </div>
      )}
    </div>
  );
}

interface PolicyDoc {
  bias?: number;
  weights?: Record<string, number>;
  thresholds?: Record<string, number>;
}

const docOf = (p: PolicyDetail | undefined): PolicyDoc => (p?.document ?? {}) as PolicyDoc;

function PolicyDiff({ change }: { change: Change }) {
  const version = (change.payload as { version?: string } | undefined)?.version ?? nameOf(change.target);
  const pending = change.status === 'pending';
  const state = useLoad(async () => {
    if (!pending || !hasScope('policy:read')) return undefined;
    const [next, list] = await Promise.all([policy(version), vouch.GET('/api/v1/policies')]);
    const active = list.data.find((p) => p.status === 'active');
    const current = active && active.version !== version ? await policy(active.version) : undefined;
    return { next, current };
  }, [version, pending]);
  const link = <Link to={`/policies/${enc(version)}`}>{version}</Link>;
  if (!pending) return <p class="change-diff">Policy {link}</p>;
  return (
    <div class="change-diff">
      <Loader state={state} feature="The policies">
        {(s) =>
          !s ? (
            <p>Policy {link}</p>
          ) : (
            <PolicyFigures
              link={link}
              summary={s.next.summary}
              next={docOf(s.next)}
              current={s.current ? docOf(s.current) : undefined}
              currentVersion={s.current?.version}
            />
          )
        }
      </Loader>
    </div>
  );
}

function PolicyFigures({
  link,
  summary,
  next,
  current,
  currentVersion,
}: {
  link: ComponentChildren;
  summary: string;
  next: PolicyDoc;
  current: PolicyDoc | undefined;
  currentVersion: string | undefined;
}) {
  if (!current)
    return (
      <p>
        Policy {link} ({summary}). No other policy is active to compare it with.
      </p>
    );
  const levels = ['medium', 'high', 'critical'];
  const names = [...new Set([...Object.keys(current.weights ?? {}), ...Object.keys(next.weights ?? {})])];
  const moved = names
    .map((n) => ({ n, was: current.weights?.[n], now: next.weights?.[n] }))
    .filter((w) => w.was !== w.now)
    .sort((a, b) => Math.abs((b.now ?? 0) - (b.was ?? 0)) - Math.abs((a.now ?? 0) - (a.was ?? 0)));
  const weightRows = (rows: typeof moved) =>
    rows.map((w) => (
      <tr key={w.n}>
        <th scope="row" data-label="Signal" class="mono">
          {w.n}
        </th>
        <td data-label={`Active (${currentVersion})`} class="num">
          {fmtNumber(w.was)}
        </td>
        <td data-label="After approval" class="num">
          {fmtNumber(w.now)}
        </td>
        <td data-label="Change" class="num">
          {w.was !== undefined && w.now !== undefined ? signed(w.now - w.was) : '—'}
        </td>
      </tr>
    ));
  return (
    <>
      <p>
        Policy {link} ({summary}) would replace the active {currentVersion}.
      </p>
      <div class="table-wrap">
        <table class="stack policy-thresholds">
          <caption>Thresholds: the score from which each level starts</caption>
          <thead>
            <tr>
              <th scope="col">Level</th>
              <th scope="col" class="num">
                Active ({currentVersion})
              </th>
              <th scope="col" class="num">
                After approval
              </th>
            </tr>
          </thead>
          <tbody>
            {levels.map((l) => {
              const was = current.thresholds?.[l];
              const now = next.thresholds?.[l];
              return (
                <tr key={l} class={was !== now ? 'attention' : undefined}>
                  <th scope="row" data-label="Level">
                    {l}
                  </th>
                  <td data-label={`Active (${currentVersion})`} class="num">
                    {fmtNumber(was)}
                  </td>
                  <td data-label="After approval" class="num">
                    {fmtNumber(now)}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {moved.length === 0 ? (
        <p class="muted">The same weights as the active policy.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack policy-weights">
            <caption>
              Weights that change ({moved.length} of {names.length} signals), the largest moves first
            </caption>
            <thead>
              <tr>
                <th scope="col">Signal</th>
                <th scope="col" class="num">
                  Active
                </th>
                <th scope="col" class="num">
                  After approval
                </th>
                <th scope="col" class="num">
                  Change
                </th>
              </tr>
            </thead>
            <tbody>{weightRows(moved.slice(0, WEIGHTS_SHOWN))}</tbody>
          </table>
          {moved.length > WEIGHTS_SHOWN && (
            <details class="more-weights">
              <summary>{moved.length - WEIGHTS_SHOWN} more</summary>
              <table class="stack policy-weights">
                <caption class="sr-only">The other weights that change</caption>
                <tbody>{weightRows(moved.slice(WEIGHTS_SHOWN))}</tbody>
              </table>
            </details>
          )}
        </div>
      )}
    </>
  );
}

const signed = (x: number): string => (x > 0 ? `+${fmtNumber(x)}` : fmtNumber(x));

function ListDeletion({ change }: { change: Change }) {
  const name = (change.payload as { name?: string } | undefined)?.name ?? nameOf(change.target);
  const pending = change.status === 'pending';
  const list = useLoad(async () => (pending && hasScope('rules:read') ? listsApi.get(name) : undefined), [name]);
  return (
    <div class="change-diff">
      <p>
        Deletes the list <Link to={`/rules/lists/${enc(name)}`}>{name}</Link>
        {list.data && (
          <>
            {' '}
            ({list.data.kind}
            {list.data.entries !== undefined ? `, ${fmtNumber(list.data.entries)} entries` : ''})
          </>
        )}
        : rules can no longer read it.
      </p>
    </div>
  );
}
