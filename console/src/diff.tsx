// A compact diff of what an audit entry's change did: for each field that differs, the value before
// (struck through) and after. Fields that did not change are left out; long values are cut, whole in
// their tooltip; a long list of fields folds after the first few.
import type { ComponentChildren } from 'preact';

const CUT = 80;
const SHOWN = 6;

type Fields = Record<string, unknown>;
const isFields = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** A value as text: a string as it is, anything else as JSON. */
function text(v: unknown): string {
  if (v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function Value({ v, as }: { v: unknown; as: 'del' | 'ins' }) {
  const full = text(v);
  const shown = full.length > CUT ? `${full.slice(0, CUT - 1)}…` : full;
  const Tag = as;
  return (
    <Tag class="mono" title={full.length > CUT ? full : undefined}>
      <span class="sr-only">{as === 'del' ? 'before: ' : 'after: '}</span>
      {shown === '' ? '""' : shown}
    </Tag>
  );
}

interface Row {
  key: string;
  before?: unknown;
  after?: unknown;
  has: 'both' | 'before' | 'after';
}

function rows(before: unknown, after: unknown): Row[] {
  const b: Fields = isFields(before) ? before : {};
  const a: Fields = isFields(after) ? after : {};
  const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])];
  return keys
    .filter((k) => !(k in b && k in a && same(b[k], a[k])))
    .map((k) => ({
      key: k,
      before: b[k],
      after: a[k],
      has: k in b && k in a ? 'both' : k in b ? 'before' : 'after',
    }));
}

function Line({ r }: { r: Row }) {
  return (
    <li>
      <span class="diff-key">{r.key}</span> {r.has !== 'after' && <Value v={r.before} as="del" />}
      {r.has === 'both' && <span aria-hidden="true"> → </span>}
      {r.has !== 'before' && <Value v={r.after} as="ins" />}
      {r.has === 'before' && <span class="muted"> (removed)</span>}
    </li>
  );
}

/** `before` and `after` as the audit log keeps them (objects of the changed fields, or single values). */
export function CompactDiff({ before, after }: { before?: unknown; after?: unknown }) {
  if (before === undefined && after === undefined) return <span class="muted">—</span>;
  if (!isFields(before ?? {}) || !isFields(after ?? {}))
    return (
      <span class="diff">
        {before !== undefined && <Value v={before} as="del" />}
        {before !== undefined && after !== undefined && <span aria-hidden="true"> → </span>}
        {after !== undefined && <Value v={after} as="ins" />}
      </span>
    );
  const all = rows(before, after);
  if (all.length === 0) return <span class="muted">no field changed</span>;
  const list = (rs: Row[]): ComponentChildren => rs.map((r) => <Line key={r.key} r={r} />);
  return (
    <div class="diff">
      <ul>{list(all.slice(0, SHOWN))}</ul>
      {all.length > SHOWN && (
        <details>
          <summary>{all.length - SHOWN} more</summary>
          <ul>{list(all.slice(SHOWN))}</ul>
        </details>
      )}
    </div>
  );
}
