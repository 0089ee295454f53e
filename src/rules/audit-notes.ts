// What rule and list changes say in the audit log (docs/api.md, "Audit log"): the fields that
// changed, before and after. A list's values never go there, only counts: an entity list holds
// entity ids, and the log, unlike the list, is never erased.
import { loggableText, type AuditNote } from '../audit-log/auditor.ts';
import type { RuleBody } from './compile.ts';
import type { ListRow } from './list-repository.ts';

interface RuleState {
  id: string;
  version: number;
  status: string;
  body: string;
}

/** The rule's fields as the log shows them: its body's, its status, free text screened. */
function fields(rule: RuleState): Record<string, unknown> {
  const body = JSON.parse(rule.body) as RuleBody;
  return {
    name: body.name,
    condition: body.condition,
    action: body.action ?? null,
    override: body.override === true,
    final: body.final === true,
    cap: body.cap ?? null,
    description: loggableText(body.description),
    status: rule.status,
  };
}

export function ruleCreated(rule: RuleState, reason: string | null): AuditNote {
  return {
    action: 'rule.created',
    target: `rule:${rule.id}`,
    after: { ...fields(rule), version: rule.version, ...(reason ? { reason: loggableText(reason) } : {}) },
  };
}

/** rule.updated, or rule.status_changed when only the status moved, or rule.retired. */
export function ruleChanged(previous: RuleState, rule: RuleState, reason: string | null): AuditNote {
  const was = fields(previous);
  const now = fields(rule);
  const changed = Object.keys(now).filter((k) => JSON.stringify(was[k]) !== JSON.stringify(now[k]));
  const pick = (from: Record<string, unknown>) => Object.fromEntries(changed.map((k) => [k, from[k]]));
  const action =
    rule.status === 'retired'
      ? 'rule.retired'
      : changed.length === 1 && changed[0] === 'status'
        ? 'rule.status_changed'
        : 'rule.updated';
  return {
    action,
    target: `rule:${rule.id}`,
    before: { ...pick(was), version: previous.version },
    after: { ...pick(now), version: rule.version, ...(reason ? { reason: loggableText(reason) } : {}) },
  };
}

type ListFacts = Pick<ListRow, 'name' | 'kind'>;

export function listCreated(list: ListFacts & Pick<ListRow, 'description'>): AuditNote {
  return {
    action: 'list.created',
    target: `list:${list.name}`,
    after: { name: list.name, kind: list.kind, description: loggableText(list.description) },
  };
}

export function listDeleted(list: ListFacts): AuditNote {
  return { action: 'list.deleted', target: `list:${list.name}`, before: { kind: list.kind }, after: { deleted: true } };
}

export function entriesAdded(list: ListFacts, added: number, alreadyPresent: number): AuditNote {
  return {
    action: 'list.entries_added',
    target: `list:${list.name}`,
    after: { kind: list.kind, added, already_present: alreadyPresent },
  };
}

export function entryRemoved(list: ListFacts): AuditNote {
  return { action: 'list.entry_removed', target: `list:${list.name}`, after: { kind: list.kind, removed: 1 } };
}
