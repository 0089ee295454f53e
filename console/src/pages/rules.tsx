// Rules (docs/rules.md): the environment's rules with their status, version, action and cap and
// their matches over the last 30 days (shadow matches beside real ones); a rule's page with its
// condition, lifecycle, a test on the past and its versions (who, when, why). Lists: lists.tsx.
import './rules.css';
import { useState } from 'preact/hooks';
import { hasScope } from '../api.ts';
import { Empty, ErrorBox, Link, Loader, Loading, fmtDate, navigate, toProblem, useLoad } from '../ui.tsx';
import type { ApiProblem } from '../api.ts';
import { parseStats, rulesApi, type Rule, type RuleTestResult, type RuleVersion, type Stats } from './rules-api.ts';
import { HitChart } from './rules-chart.tsx';
import { Lifecycle } from './rules-lifecycle.tsx';
import { RuleEditor, TEST_DAYS, testSince } from './rules-editor.tsx';
import { RuleTestView } from './rules-test.tsx';
import { ListsPage } from './lists.tsx';
import { ListPage } from './list-page.tsx';
import { ActionText, RulesTabs, StatusBadge } from './rules-parts.tsx';

/** /rules, /rules/new, /rules/{id}, /rules/lists, /rules/lists/{name}: `rest` is what follows /rules/. */
export function RulesSection({ rest }: { rest: string }) {
  if (rest === 'lists') return <ListsPage />;
  if (rest.startsWith('lists/')) return <ListPage name={rest.slice('lists/'.length)} />;
  if (rest === 'new') return <NewRulePage />;
  if (rest) return <RulePage id={rest} />;
  return <RulesPage />;
}

function useStats() {
  return useLoad(async () => parseStats(await rulesApi.stats(TEST_DAYS)), []);
}

function RulesPage() {
  const list = useLoad(() => rulesApi.list(), []);
  const stats = useStats();
  const [message, setMessage] = useState<string>();
  const [showRetired, setShowRetired] = useState(false);
  const write = hasScope('rules:write');
  const changed = (m: string) => {
    setMessage(m);
    list.reload();
  };
  return (
    <section aria-labelledby="h-rules">
      <div class="title-row">
        <h1 id="h-rules">Rules</h1>
        {write && (
          <button class="primary" type="button" onClick={() => navigate('/rules/new')}>
            New rule
          </button>
        )}
      </div>
      <RulesTabs current="rules" />
      <p class="muted intro">
        Rules decide on top of the score: the most severe of the policy's outcome and the matched rules' actions wins,
        an override approve beats all but a final decline, and a cap can only lower the safe amount. A shadow rule is
        evaluated on every score without changing it.
      </p>
      {message && (
        <p class="ok-msg" role="status">
          {message}
        </p>
      )}
      <ErrorBox error={stats.error} what="Could not load the rules' matches" />
      <Loader state={list} feature="The rules">
        {(page) => {
          const retired = page.data.filter((r) => r.status === 'retired');
          const shown = showRetired ? page.data : page.data.filter((r) => r.status !== 'retired');
          if (page.data.length === 0)
            return (
              <Empty>
                No rules yet.{' '}
                {write ? 'Write one with “New rule”: test it on the last 30 days before saving it as a draft.' : ''}
              </Empty>
            );
          return (
            <>
              <RulesTable rules={shown} stats={stats.data} onChanged={changed} />
              {retired.length > 0 && (
                <button type="button" aria-expanded={showRetired} onClick={() => setShowRetired(!showRetired)}>
                  {showRetired ? 'Hide retired rules' : `Show retired rules (${retired.length})`}
                </button>
              )}
            </>
          );
        }}
      </Loader>
    </section>
  );
}

function RulesTable({
  rules,
  stats,
  onChanged,
}: {
  rules: Rule[];
  stats: Stats | undefined;
  onChanged: (m: string) => void;
}) {
  const write = hasScope('rules:write');
  return (
    <div class="table-wrap">
      <table class="stack rules-table">
        <caption class="sr-only">Rules, with their matches over the last {TEST_DAYS} days</caption>
        <thead>
          <tr>
            <th scope="col">Rule</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Version
            </th>
            <th scope="col">Does</th>
            <th scope="col">Last {TEST_DAYS} days</th>
            <th scope="col">Updated</th>
            {write && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {rules.map((r) => (
            <tr key={r.id} data-rule={r.name}>
              <td data-label="Rule" class="rule-name">
                <Link to={`/rules/${encodeURIComponent(r.id)}`} class="mono">
                  {r.name}
                </Link>
                {r.description && <small class="muted desc">{r.description}</small>}
              </td>
              <td data-label="Status">
                <StatusBadge status={r.status} />
              </td>
              <td data-label="Version" class="num">
                {r.version}
              </td>
              <td data-label="Does">
                <ActionText rule={r} />
              </td>
              <td data-label="Matches" class="hits">
                {stats ? (
                  <HitChart name={r.name} days={stats.byRule.get(r.id)} scored={stats.scored} />
                ) : (
                  <span class="muted">—</span>
                )}
              </td>
              <td data-label="Updated" class="updated">
                <span class="nowrap">{fmtDate(r.updated_at ?? r.created_at)}</span>
                {r.updated_by && <small class="muted by"> by {r.updated_by}</small>}
              </td>
              {write && (
                <td data-label="" class="actions">
                  <Lifecycle rule={r} onChanged={onChanged} />
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function NewRulePage() {
  return (
    <section aria-labelledby="h-new-rule">
      <p>
        <Link to="/rules">← All rules</Link>
      </p>
      <h1 id="h-new-rule">New rule</h1>
      {hasScope('rules:write') ? (
        <RuleEditor
          onSaved={(r) => navigate(`/rules/${encodeURIComponent(r.id)}`)}
          onCancel={() => navigate('/rules')}
        />
      ) : (
        <Empty>Writing rules needs the rules:write scope and the operator role.</Empty>
      )}
    </section>
  );
}

function RulePage({ id }: { id: string }) {
  const state = useLoad(() => rulesApi.get(id), [id]);
  const stats = useStats();
  const [editing, setEditing] = useState(false);
  const [message, setMessage] = useState<string>();
  const [versionsTick, setVersionsTick] = useState(0);
  const changed = (m: string) => {
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
                  <span class="mono">{r.name}</span> <StatusBadge status={r.status} />
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
              {message && (
                <p class="ok-msg" role="status">
                  {message}
                </p>
              )}
              {editing ? (
                <RuleEditor
                  rule={r}
                  onSaved={(s) => changed(`Saved version ${s.version} of ${s.name}.`)}
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
            {r.updated_by && <small class="muted"> by {r.updated_by}</small>}
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
                      <td data-label="Who" class="mono who-cell">
                        {v.changed_by ?? '—'}
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
