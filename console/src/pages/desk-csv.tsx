// A list's entries from a CSV file: one value per line, or a file whose header names a `value`
// column. The preview says how many values the file holds (blank lines and repeats left out) and
// shows the first rows; "Add" sends them in batches of 1,000, one after another, to the list's
// entries route (POST /api/v1/lists/{name}/entries, which takes 1–1,000 values and adds none of a
// batch it refuses). A batch refused for some of its values (400 naming `values.<i>`) is sent
// again without them, and those rows are listed with the reason and their line in the file.
import { useState } from 'preact/hooks';
import type { ApiProblem } from '../api.ts';
import { ErrorBox, Field, fmtNumber, toProblem } from '../ui.tsx';
import { listsApi, type RuleList } from './rules-api.ts';

const BATCH = 1000;
const MAX_BYTES = 10 * 1024 * 1024;
const PREVIEW_ROWS = 5;
/** A line number's column: narrow, beside the value (set through the CSSOM, which the CSP allows). */
const LINE_COLUMN = { width: '5rem' };

interface Row {
  /** the line of the file it came from (1 is the first) */
  line: number;
  value: string;
}
interface RowError extends Row {
  message: string;
}
interface Parsed {
  rows: Row[];
  /** rows the file holds that cannot be a value */
  errors: RowError[];
  column: string | null;
  repeats: number;
}

/** The file's records (RFC 4180: quoted fields may hold commas, quotes and line breaks), each with its first line. */
function records(text: string): Array<{ line: number; cells: string[] }> {
  const out: Array<{ line: number; cells: string[] }> = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  const end = () => {
    cells.push(cell);
    out.push({ line: start, cells });
    cells = [];
    cell = '';
    start = line;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else {
        if (c === '\n') line++;
        cell += c;
      }
    } else if (c === '"' && cell === '') quoted = true;
    else if (c === ',') {
      cells.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      line++;
      end();
    } else cell += c;
  }
  if (cell !== '' || cells.length > 0) end();
  return out;
}

function parseEntries(text: string): Parsed {
  const all = records(text.replace(/^\uFEFF/, ''));
  const header = all[0]?.cells.map((c) => c.trim().toLowerCase()) ?? [];
  const at = header.indexOf('value');
  const body = at >= 0 ? all.slice(1) : all;
  const seen = new Set<string>();
  const parsed: Parsed = { rows: [], errors: [], column: at >= 0 ? 'value' : null, repeats: 0 };
  for (const r of body) {
    if (r.cells.every((c) => c.trim() === '')) continue;
    if (at < 0 && r.cells.length > 1) {
      parsed.errors.push({
        line: r.line,
        value: r.cells.join(','),
        message: 'several columns, and no “value” column named in a header',
      });
      continue;
    }
    const value = (r.cells[at < 0 ? 0 : at] ?? '').trim();
    if (!value) parsed.errors.push({ line: r.line, value: '', message: 'no value in the “value” column' });
    else if (value.length > 256) parsed.errors.push({ line: r.line, value, message: 'longer than 256 characters' });
    else if (seen.has(value)) parsed.repeats++;
    else {
      seen.add(value);
      parsed.rows.push({ line: r.line, value });
    }
  }
  return parsed;
}

/** A refusal's rows: its errors naming `values.<i>` of the batch sent. */
function refusedRows(problem: ApiProblem, sent: Row[]): RowError[] {
  return problem.errors.flatMap((e) => {
    const i = /^values\.(\d+)$/.exec(e.field)?.[1];
    const row = i === undefined ? undefined : sent[Number(i)];
    return row ? [{ ...row, message: e.message }] : [];
  });
}

interface Sent {
  added: number;
  present: number;
  batches: number;
  errors: RowError[];
  /** a batch refused as a whole (the list full, the list gone…): it and the ones after it were not added */
  stopped?: { from: number; problem: ApiProblem };
}

async function send(list: string, rows: Row[], reason: string, progress: (s: Sent) => void): Promise<Sent> {
  const sent: Sent = { added: 0, present: 0, batches: 0, errors: [] };
  for (let from = 0; from < rows.length; from += BATCH) {
    let batch = rows.slice(from, from + BATCH);
    for (;;) {
      try {
        const r = await listsApi.add(list, { values: batch.map((b) => b.value), ...(reason ? { reason } : {}) });
        sent.added += r.added;
        sent.present += r.already_present;
        break;
      } catch (err) {
        const problem = toProblem(err);
        const refused = problem.status === 400 ? refusedRows(problem, batch) : [];
        if (refused.length === 0) return { ...sent, stopped: { from: batch[0]!.line, problem } };
        sent.errors.push(...refused);
        batch = batch.filter((b) => !refused.some((r) => r.line === b.line));
        if (batch.length === 0) break;
      }
    }
    sent.batches++;
    progress({ ...sent });
  }
  return sent;
}

function RowErrors({ errors, caption }: { errors: RowError[]; caption: string }) {
  if (errors.length === 0) return null;
  return (
    <div class="table-wrap">
      <table class="stack csv-errors">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col" class="num" style={LINE_COLUMN}>
              Line
            </th>
            <th scope="col">Value</th>
            <th scope="col">Why</th>
          </tr>
        </thead>
        <tbody>
          {errors.map((e) => (
            <tr key={e.line} data-line={e.line}>
              <td data-label="Line" class="num">
                {e.line}
              </td>
              <td data-label="Value" class="mono value-cell">
                {e.value || <span class="muted">empty</span>}
              </td>
              <td data-label="Why">{e.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function UploadEntries({ list, onAdded }: { list: RuleList; onAdded: (m: string) => void }) {
  const [file, setFile] = useState<{ name: string; parsed: Parsed }>();
  const [reason, setReason] = useState('');
  const [readError, setReadError] = useState<string>();
  const [progress, setProgress] = useState<Sent>();
  const [result, setResult] = useState<Sent>();
  const [busy, setBusy] = useState(false);
  const choose = async (f: File | undefined) => {
    setResult(undefined);
    setReadError(undefined);
    setFile(undefined);
    if (!f) return;
    if (f.size > MAX_BYTES) return setReadError(`${f.name} is larger than 10 MB: split it.`);
    setFile({ name: f.name, parsed: parseEntries(await f.text()) });
  };
  const rows = file?.parsed.rows ?? [];
  const batches = Math.ceil(rows.length / BATCH);
  const upload = async () => {
    setBusy(true);
    setProgress(undefined);
    const done = await send(list.name, rows, reason.trim(), setProgress);
    setResult(done);
    setBusy(false);
    if (done.added + done.present > 0)
      onAdded(
        `Added ${fmtNumber(done.added)} ${done.added === 1 ? 'entry' : 'entries'} from ${file!.name}` +
          (done.present ? `; ${fmtNumber(done.present)} already present` : '') +
          '.',
      );
  };
  return (
    <form class="panel csv-upload" aria-labelledby="h-upload" onSubmit={(e) => e.preventDefault()}>
      <h2 id="h-upload">Add entries from a CSV file</h2>
      <Field label="CSV file" hint="one value per line, or a header naming a “value” column; sent 1,000 at a time">
        <input
          type="file"
          name="csv"
          accept=".csv,.txt,text/csv,text/plain"
          disabled={busy}
          onChange={(e) => void choose(e.currentTarget.files?.[0])}
        />
      </Field>
      {readError && (
        <p class="error" role="alert">
          {readError}
        </p>
      )}
      {file && (
        <div class="csv-preview" data-values={rows.length} data-batches={batches}>
          <p role="status">
            <strong>{fmtNumber(rows.length)}</strong> {rows.length === 1 ? 'value' : 'values'} in {file.name}
            {file.parsed.column ? ' (its value column)' : ''}, {fmtNumber(batches)}{' '}
            {batches === 1 ? 'batch' : 'batches'}
            {file.parsed.repeats > 0 && `; ${fmtNumber(file.parsed.repeats)} repeated left out`}
            {file.parsed.errors.length > 0 && `; ${fmtNumber(file.parsed.errors.length)} rows cannot be sent`}.
          </p>
          {rows.length > 0 && (
            <div class="table-wrap">
              <table class="csv-first">
                <caption>The first rows</caption>
                <thead>
                  <tr>
                    <th scope="col" class="num" style={LINE_COLUMN}>
                      Line
                    </th>
                    <th scope="col">Value</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.slice(0, PREVIEW_ROWS).map((r) => (
                    <tr key={r.line}>
                      <td data-label="Line" class="num">
                        {r.line}
                      </td>
                      <td data-label="Value" class="mono value-cell">
                        {r.value}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <RowErrors errors={file.parsed.errors} caption="Rows left out of the file" />
          <Field label="Reason (optional)">
            <input
              name="csv_reason"
              maxLength={1000}
              value={reason}
              onInput={(e) => setReason(e.currentTarget.value)}
            />
          </Field>
          <button class="primary" type="button" disabled={busy || rows.length === 0} onClick={() => void upload()}>
            {busy
              ? `Sending batch ${fmtNumber((progress?.batches ?? 0) + 1)} of ${fmtNumber(batches)}…`
              : `Add ${fmtNumber(rows.length)} ${rows.length === 1 ? 'value' : 'values'}`}
          </button>
        </div>
      )}
      {result && (
        <div role="status" data-added={result.added} data-refused={result.errors.length}>
          <p class={result.errors.length || result.stopped ? 'error' : 'ok-msg'}>
            {fmtNumber(result.added)} added, {fmtNumber(result.present)} already present
            {result.errors.length > 0 && `, ${fmtNumber(result.errors.length)} refused`}.
          </p>
          <RowErrors errors={result.errors} caption="Rows the service refused" />
          {result.stopped && (
            <ErrorBox
              error={result.stopped.problem}
              what={`Stopped at line ${result.stopped.from}: it and the rows after it were not added`}
            />
          )}
        </div>
      )}
    </form>
  );
}
