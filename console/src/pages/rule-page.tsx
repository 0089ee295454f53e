// A rule's page (docs/rules.md): its condition, lifecycle, matches, a test on the past and its versions
// (who, when, why).
import { useState } from 'preact/hooks';
import { hasScope, type ApiProblem } from '../api.ts';
import { Done, Empty, ErrorBox, Link, Loader, Loading, fmtDate, toProblem, useLoad } from '../ui.tsx';
import type { Change } from '../people-types.ts';
import { parseStats, rulesApi, type Rule, type RuleTestResult, type RuleVersion } from './rules-api.ts';
import { HitChart } from './rules-chart.tsx';
import { Lifecycle } from './rules-lifecycle.tsx';
import { RuleEditor, TEST_DAYS, testSince } from './rules-editor.tsx';
import { RuleTestView } from './rules-test.tsx';
import { ActionText, Breakable, StatusBadge } from './rules-parts.tsx';
import { whoName } from './actors.ts';

/** Every rule's matches over the last 30 days, for the rules list and a rule's page. */
export function useStats() {
  return useLoad(async () => parseStats(await rulesApi.stats(TEST_DAYS)), []);
}
export function RulePage({ id }: { id: string }) {
  const state = useLoad(() => rulesApi.get(id), [id]);
  const stats = useStats();
  const [editing, setEditing] = useState(false);
  const [message, setMessage] = useState<string | Change>();
  const [versionsTick, setVersionsTick] = useState(0);
  const changed = (m: string | Change) => {
    setMessage(m);
    setEditing(false);
    state.reload();
    setVersionsTick((t) => t + 1);
  };
  return (
    <section aria-labelledby="h-rule">
      <p>
        <Link to="/rules">← All rules</Link>
      </p>
      {state.error?.status === 404 ? (
        <Empty>No rule with this id in this environment.</Empty>
      ) : (
        <Loader state={state} feature="This rule">
          {(r) => (
            <>
              <div class="title-row spaced">
                <h1 id="h-rule">
                  <span class="mono">
                    <Breakable name={r.name} />
                  </span>{' '}
                  <StatusBadge status={r.status} />
                </h1>
                <div class="actions">
                  {hasScope('rules:write') && r.status !== 'retired' && !editing && (
                    <button type="button" onClick={() => setEditing(true)}>
                      Edit
                    </button>
                  )}
                  <Lifecycle rule={r} onChanged={changed} />
                </div>
              </div>
              <Done outcome={message} />
              {editing ? (
                <RuleEditor
                  rule={r}
                  onSaved={(s) => changed(`Saved version ${s.version} of ${s.name}.`)}
                  onHeld={changed}
                  onCancel={() => setEditing(false)}
                />
              ) : (
                <RuleFacts r={r} />
              )}
              <h2>Matches over the last {TEST_DAYS} days</h2>
              <Loader state={stats} feature="The rule's matches">
                {(s) => <HitChart name={r.name} days={s.byRule.get(r.id)} scored={s.scored} large />}
              </Loader>
              {!editing && <SavedTest rule={r} />}
              <Versions id={r.id} tick={versionsTick} />
            </>
          )}
        </Loader>
      )}
    </section>
  );
}

function RuleFacts({ r }: { r: Rule }) {
  return (
    <>
      <dl class="facts">
        <div>
          <dt>Version</dt>
          <dd class="big">{r.version}</dd>
        </div>
        <div>
          <dt>Does</dt>
          <dd>
            <ActionText rule={r} />
          </dd>
        </div>
        <div>
          <dt>Updated</dt>
          <dd>
            {fmtDate(r.updated_at ?? r.created_at)}
            {r.updated_by && (
              <small class="muted" title={r.updated_by}>
                {' '}
                by {whoName(r.updated_by_actor, r.updated_by)}
              </small>
            )}
          </dd>
        </div>
        {r.description && (
          <div class="wide">
            <dt>Description</dt>
            <dd>{r.description}</dd>
          </div>
        )}
      </dl>
      <h2>Condition</h2>
      <pre class="condition-view mono">{r.condition}</pre>
    </>
  );
}

/** The saved version tested on the last 30 days (POST /api/v1/rules/{id}/test). */
function SavedTest({ rule }: { rule: Rule }) {
  const [test, setTest] = useState<{ busy: boolean; result?: RuleTestResult; error?: ApiProblem }>();
  const run = async () => {
    setTest({ busy: true });
    try {
      setTest({ busy: false, result: await rulesApi.testSaved(rule.id, testSince()) });
    } catch (err) {
      setTest({ busy: false, error: toProblem(err) });
    }
  };
  return (
    <section aria-labelledby="h-saved-test">
      <h2 id="h-saved-test">Test on the last {TEST_DAYS} days</h2>
      {!test && (
        <p>
          <button type="button" onClick={run}>
            Test version {rule.version} on the last {TEST_DAYS} days
          </button>
        </p>
      )}
      {test?.busy && <Loading what="Replaying the rule on stored decisions" />}
      {test?.error && <ErrorBox error={test.error} what="The test failed" />}
      {test?.result && <RuleTestView r={test.result} />}
    </section>
  );
}

const BODY_FIELDS = ['name', 'condition', 'action', 'override', 'final', 'cap', 'description'] as const;
/** Whether two versions say the same (a version that only moved the status). */
const sameBody = (a: RuleVersion, b: RuleVersion) => BODY_FIELDS.every((k) => (a[k] ?? null) === (b[k] ?? null));

function Versions({ id, tick }: { id: string; tick: number }) {
  const state = useLoad(() => rulesApi.versions(id), [id, tick]);
  return (
    <section aria-labelledby="h-versions">
      <h2 id="h-versions">Versions</h2>
      <Loader state={state} feature="The versions">
        {(page) => (
          <div class="table-wrap">
            <table class="stack versions">
              <caption class="sr-only">Every version of this rule, newest first</caption>
              <thead>
                <tr>
                  <th scope="col" class="num">
                    Version
                  </th>
                  <th scope="col">Status</th>
                  <th scope="col">When</th>
                  <th scope="col">Who</th>
                  <th scope="col">Why</th>
                  <th scope="col">Rule</th>
                </tr>
              </thead>
              <tbody>
                {[...page.data]
                  .sort((a, b) => b.version - a.version)
                  .map((v, i, all) => (
                    <tr key={`${v.version}-${i}`}>
                      <td data-label="Version" class="num">
                        {v.version}
                      </td>
                      <td data-label="Status">
                        <StatusBadge status={v.status} />
                      </td>
                      <td data-label="When">{fmtDate(v.changed_at)}</td>
                      <td data-label="Who" class="who-cell" title={v.changed_by}>
                        {whoName(v.changed_by_actor, v.changed_by) ?? '—'}
                      </td>
                      <td data-label="Why">{v.reason || <span class="muted">none given</span>}</td>
                      <td data-label="Rule">
                        {all[i + 1] && sameBody(v, all[i + 1]!) ? (
                          <span class="muted">
                            unchanged: {all[i + 1]!.status} → {v.status}
                          </span>
                        ) : (
                          <>
                            <code class="cond-cell">{v.condition}</code> <ActionText rule={v} />
                          </>
                        )}
                      </td>
                    </tr>
                  ))}
              </tbody>
            </table>
          </div>
        )}
      </Loader>
    </section>
  );
}
