// Rules (docs/rules.md): the environment's rules with their status, version, action and cap and
// their matches over the last 30 days (shadow matches beside real ones). A rule's page: rule-page.tsx.
// Lists: lists.tsx.
import './rules.css';
import { useState } from 'preact/hooks';
import { hasScope } from '../api.ts';
import { Done, Empty, ErrorBox, Link, Loader, fmtDate, navigate, useLoad } from '../ui.tsx';
import type { Change } from '../people-types.ts';
import { rulesApi, type Rule, type Stats } from './rules-api.ts';
import { HitChart } from './rules-chart.tsx';
import { Lifecycle } from './rules-lifecycle.tsx';
import { RuleEditor, TEST_DAYS } from './rules-editor.tsx';
import { ListsPage } from './lists.tsx';
import { ListPage } from './list-page.tsx';
import { RulePage, useStats } from './rule-page.tsx';
import { ActionText, Breakable, RulesTabs, StatusBadge } from './rules-parts.tsx';
import { whoName } from './actors.ts';

/** /rules, /rules/new, /rules/{id}, /rules/lists, /rules/lists/{name}: `rest` is what follows /rules/. */
export function RulesSection({ rest }: { rest: string }) {
  if (rest === 'lists') return <ListsPage />;
  if (rest.startsWith('lists/')) return <ListPage name={rest.slice('lists/'.length)} />;
  if (rest === 'new') return <NewRulePage />;
  if (rest) return <RulePage id={rest} />;
  return <RulesPage />;
}
function RulesPage() {
  const list = useLoad(() => rulesApi.list(), []);
  const stats = useStats();
  const [message, setMessage] = useState<string | Change>();
  const [showRetired, setShowRetired] = useState(false);
  const write = hasScope('rules:write');
  const changed = (m: string | Change) => {
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
      <Done outcome={message} />
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
  onChanged: (m: string | Change) => void;
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
                  <Breakable name={r.name} />
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
                {r.updated_by && (
                  <small class="muted by" title={r.updated_by}>
                    {' '}
                    by {whoName(r.updated_by_actor, r.updated_by)}
                  </small>
                )}
              </td>
              {write && (
                <td data-label="" class="actions">
                  <div class="row-actions">
                    <Lifecycle rule={r} onChanged={onChanged} />
                  </div>
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
