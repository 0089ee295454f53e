// Row types of the rules, lists and reviews tables (029_rules_reviews, 030_list_entry_revisions):
// a desk's rules and their versions, the revision counter, typed lists and their entries, and the
// review queue. Times are epoch ms.
import type { Generated } from 'kysely';

/** Rules (029_rules_reviews, docs/rules.md): each rule's current version. */
export interface RulesTable {
  id: string;
  environment: string;
  name: string;
  version: number;
  status: string;
  body: string;
  created_at: number;
  created_by: string;
  updated_at: number;
  updated_by: string;
}

/** Every version of every rule as it was saved. */
export interface RuleVersionsTable {
  rule_id: string;
  version: number;
  environment: string;
  status: string;
  body: string;
  changed_at: number;
  changed_by: string;
  reason: string | null;
}

/** One counter per environment, moved by every rule or list change (part of the score cache key). */
export interface RuleRevisionsTable {
  environment: string;
  revision: number | string;
}

export interface ListsTable {
  id: string;
  environment: string;
  name: string;
  kind: string;
  description: string | null;
  created_at: number;
  created_by: string;
  deleted_at: number | null;
  /** (031) entries not removed (expired ones until swept) and their values' characters */
  held_entries: Generated<number | string>;
  held_chars: Generated<number | string>;
}

/** A list entry is never deleted: removal and expiry are times, so a rule test sees the list as it was. */
export interface ListEntriesTable {
  list_id: string;
  value: string;
  added_at: number;
  added_by: string;
  reason: string | null;
  expires_at: number | null;
  removed_at: number | null;
  removed_by: string | null;
  /**
   * (030) the rule revision of the change that added, then removed, the entry: an instance reloads what changed since
   * its revision
   */
  changed_revision?: number | string | null;
}

/** Reviews (029_rules_reviews, docs/api.md "Reviews"): opened with their decision, in its commit. */
export interface ReviewsTable {
  id: string;
  environment: string;
  owner_client_id: string;
  decision_id: string;
  entity_id: string;
  outcome: string;
  reason: string;
  sample_rate: number | null;
  status: string;
  opened_at: number;
  due_at: number;
  assignee: string | null;
  claimed_at: number | null;
  resolution: string | null;
  resolution_label: string | null;
  note: string | null;
  added_to_list: string | null;
  resolved_at: number | null;
  resolved_by: string | null;
}

/** (033) the environment's running rule test, across processes: the row is the claim, until it expires */
export interface RuleTestLeasesTable {
  environment: string;
  holder: string;
  expires_at: number | string;
}
