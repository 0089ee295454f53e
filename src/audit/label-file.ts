// The files `vouch labels import` reads: CSV with the header `decision_id,label,note` (note may be
// left out; RFC 4180 quoting, so a note may hold commas, quotes and line breaks) or JSON Lines, one
// label object a line. Only the file's shape is checked here; each label is validated by the
// service, exactly as POST /api/v1/decisions/{id}/label would validate it.

export type LabelFormat = 'csv' | 'jsonl';

export interface FileLabel {
  /** where the label starts in the file (1-based), for the report of what failed */
  line: number;
  body: Record<string, unknown>;
}

export interface ParsedLabels {
  labels: FileLabel[];
  /** lines that are not a label at all (malformed JSON, a wrong number of CSV fields) */
  errors: { line: number; message: string }[];
}

/** The format a file name or its first line suggests: .csv is CSV, .jsonl/.ndjson or a leading `{` JSON Lines. */
export function guessFormat(file: string, text: string): LabelFormat {
  if (/\.csv$/i.test(file)) return 'csv';
  if (/\.(jsonl|ndjson)$/i.test(file)) return 'jsonl';
  return text
    .replace(/^\uFEFF/, '')
    .trimStart()
    .startsWith('{')
    ? 'jsonl'
    : 'csv';
}

export function parseLabels(text: string, format: LabelFormat): ParsedLabels {
  const body = text.replace(/^\uFEFF/, '');
  return format === 'csv' ? parseCsv(body) : parseJsonLines(body);
}

function parseJsonLines(text: string): ParsedLabels {
  const out: ParsedLabels = { labels: [], errors: [] };
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      out.errors.push({ line: i + 1, message: 'not valid JSON' });
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      out.errors.push({ line: i + 1, message: 'not a JSON object' });
      return;
    }
    out.labels.push({ line: i + 1, body: value as Record<string, unknown> });
  });
  return out;
}

interface CsvRecord {
  line: number;
  fields: string[];
}

/** RFC 4180 records: fields split on commas, "quoted" fields may hold commas, "" and line breaks. */
function csvRecords(text: string): CsvRecord[] | { line: number; message: string } {
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  let fieldStarted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') {
        quoted = false;
      } else {
        if (c === '\n') line++;
        field += c;
      }
      continue;
    }
    if (c === '"' && !fieldStarted) {
      quoted = true;
      fieldStarted = true;
    } else if (c === ',') {
      fields.push(field);
      field = '';
      fieldStarted = false;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      fields.push(field);
      records.push({ line: start, fields });
      fields = [];
      field = '';
      fieldStarted = false;
      line++;
      start = line;
    } else {
      field += c;
      fieldStarted = true;
    }
  }
  if (quoted) return { line: start, message: 'a quoted field is not closed' };
  if (fieldStarted || fields.length > 0) {
    fields.push(field);
    records.push({ line: start, fields });
  }
  return records.filter((r) => !(r.fields.length === 1 && r.fields[0]!.trim() === ''));
}

const HEADERS = ['decision_id,label,note', 'decision_id,label'];

function parseCsv(text: string): ParsedLabels {
  const records = csvRecords(text);
  if (!Array.isArray(records)) return { labels: [], errors: [records] };
  const [header, ...rows] = records;
  const columns = header?.fields.map((f) => f.trim().toLowerCase()) ?? [];
  if (!HEADERS.includes(columns.join(','))) {
    return {
      labels: [],
      errors: [{ line: header?.line ?? 1, message: 'the first line must be the header decision_id,label,note' }],
    };
  }
  const out: ParsedLabels = { labels: [], errors: [] };
  for (const row of rows) {
    if (row.fields.length !== columns.length) {
      out.errors.push({ line: row.line, message: `${row.fields.length} fields, expected ${columns.length}` });
      continue;
    }
    const [decisionId, label, note] = row.fields;
    out.labels.push({
      line: row.line,
      body: {
        decision_id: decisionId!.trim(),
        label: label!.trim(),
        ...(note !== undefined && note !== '' ? { note } : {}),
      },
    });
  }
  return out;
}
