// What the Rules and Lists pages share: their tabs, a rule's status badge and what a rule does.
import { Fragment } from 'preact';
import { Link, fmtNumber } from '../ui.tsx';
import type { Rule } from './rules-api.ts';

/** Rules | Lists, under the page title. */
export function RulesTabs({ current }: { current: 'rules' | 'lists' }) {
  return (
    <nav class="tabs" aria-label="Rules and lists">
      <Link to="/rules" aria-current={current === 'rules' ? 'page' : undefined}>
        Rules
      </Link>
      <Link to="/rules/lists" aria-current={current === 'lists' ? 'page' : undefined}>
        Lists
      </Link>
    </nav>
  );
}

export const StatusBadge = ({ status }: { status: string }) => <span class={`badge rule-${status}`}>{status}</span>;

/** What a rule does: its action (with override/final) and its cap. */
export function ActionText({ rule }: { rule: Pick<Rule, 'action' | 'override' | 'final' | 'cap'> }) {
  const cap = rule.cap === undefined || rule.cap === null || rule.cap === '' ? null : rule.cap;
  return (
    <span class="action-text">
      {rule.action ? (
        <span class={`badge outcome-${rule.action}`}>{rule.action}</span>
      ) : cap === null ? (
        <span class="muted">nothing</span>
      ) : null}
      {rule.override && <small class="flag"> override</small>}
      {rule.final && <small class="flag"> final</small>}
      {cap !== null && (
        <span class="cap">
          {rule.action ? ' ' : ''}cap <span class="mono">{typeof cap === 'number' ? fmtNumber(cap) : cap}</span>
        </span>
      )}
    </span>
  );
}

/**
 * A rule's name that may wrap after its underscores: names run to 120 characters, and one that
 * cannot wrap widens its table or box past a phone's screen.
 */
export const Breakable = ({ name }: { name: string }) => (
  <>
    {name.split(/(?<=_)/).map((part, i) => (
      <Fragment key={i}>
        {i > 0 && <wbr />}
        {part}
      </Fragment>
    ))}
  </>
);
