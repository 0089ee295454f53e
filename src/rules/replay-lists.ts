// The lists as they were (docs/rules.md, "Testing a rule"): a rule test answers `in_list(name,
// value)` at each decision's own time, not today's. An entry is never deleted (it is removed or it
// expires), and a list may be deleted and its name taken again, so every entry is an interval of
// time during which `value` was on the list of that name; a lookup asks whether any interval of
// (name, value) covers the decision's created_at. Only the lists the tested rule names are loaded.

/** One list entry as stored, with its list's name and deletion time (plain data: it crosses to the worker). */
export interface ListEntryRow {
  list: string;
  value: string;
  added_at: number;
  removed_at: number | null;
  expires_at: number | null;
  /** the list's own deletion: its entries stop counting then */
  list_deleted_at: number | null;
}

/** [from, to): present from its adding up to the first of its removal, expiry and its list's deletion. */
type Interval = readonly [from: number, to: number];

export class ListHistory {
  private readonly lists = new Map<string, Map<string, Interval[]>>();
  private readonly first = new Map<string, number>();

  constructor(rows: Iterable<ListEntryRow>) {
    for (const row of rows) this.add(row);
  }

  private add(row: ListEntryRow): void {
    const to = Math.min(row.removed_at ?? Infinity, row.expires_at ?? Infinity, row.list_deleted_at ?? Infinity);
    if (!(to > row.added_at)) return;
    this.first.set(row.list, Math.min(this.first.get(row.list) ?? Infinity, row.added_at));
    let values = this.lists.get(row.list);
    if (!values) this.lists.set(row.list, (values = new Map()));
    const intervals = values.get(row.value);
    if (intervals) intervals.push([row.added_at, to]);
    else values.set(row.value, [[row.added_at, to]]);
  }

  /** Was `value` on the list `name` at time `at` (ms)? A value's intervals are few: a linear scan. */
  has(name: string, value: string, at: number): boolean {
    const intervals = this.lists.get(name)?.get(value);
    if (!intervals) return false;
    for (const [from, to] of intervals) if (from <= at && at < to) return true;
    return false;
  }

  /** When the list of this name got its first entry (ms), or undefined when it never had one. */
  firstEntryAt(name: string): number | undefined {
    return this.first.get(name);
  }

  /** The lookup a compiled rule calls, fixed at one decision's time. */
  at(at: number): (name: string, value: string) => boolean {
    return (name, value) => this.has(name, value, at);
  }
}
