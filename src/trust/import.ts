// `vouch events import FILE.ndjson`: bulk history load. Each line is validated on its own; a bad
// line is reported with its number and skipped, never stopping or corrupting the import.
import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { compileBodyCheck } from '../http/validation.ts';
import type { Config } from '../config/env.ts';
import { loadPolicy } from '../model/policy-document.ts';
import type { Store } from '../store/db.ts';
import { ingestEvents } from './ingest.ts';
import { EventConflictError } from './event-ids.ts';
import { TrustEvent, eventErrors } from './schemas.ts';
import type { Environment } from '../lib/principal.ts';

const BATCH = 1000;
const SHOWN_REJECTS = 50;

export interface ImportSummary {
  accepted: number;
  duplicates: number;
  rejected: Array<{ line: number; reason: string }>;
  rejectedCount: number;
}

function progressBar(done: number, total: number, lines: number): string {
  const width = 30;
  const ratio = total > 0 ? Math.min(1, done / total) : 0;
  const filled = Math.round(ratio * width);
  return `\r[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}%  ${lines} lines`;
}

/**
 * `path` is a file, or `-` for standard input (no progress bar: its size is unknown).
 * `clientId` owns the imported event ids (default '': the owner of events stored before ids were
 * scoped to clients). An id already used for a different event rejects that line only.
 * `environment` is the partition the events go to (default live; test mode, docs/api.md, "Integration").
 */
export async function importFile(
  store: Store,
  path: string,
  config: Pick<Config, 'policyFile'> & Partial<Pick<Config, 'requireHashedIds'>>,
  progress: (line: string) => void = () => {},
  {
    clientId = '',
    environment = 'live',
    stdin = process.stdin,
  }: { clientId?: string; environment?: Environment; stdin?: Readable } = {},
): Promise<ImportSummary> {
  const policy = loadPolicy(config.policyFile);
  const check = compileBodyCheck(TrustEvent);
  const requireHashedIds = config.requireHashedIds ?? false;
  const fromStdin = path === '-';
  const total = fromStdin ? 0 : statSync(path).size;
  const summary: ImportSummary = { accepted: 0, duplicates: 0, rejected: [], rejectedCount: 0 };
  const reject = (line: number, reason: string) => {
    summary.rejectedCount += 1;
    if (summary.rejected.length < SHOWN_REJECTS) summary.rejected.push({ line, reason });
  };
  let batch: TrustEvent[] = [];
  let lines: number[] = [];
  const flush = async () => {
    while (batch.length > 0) {
      try {
        const result = await ingestEvents(store, batch, policy, { environment, clientId });
        summary.accepted += result.accepted;
        summary.duplicates += result.duplicates;
        break;
      } catch (err) {
        if (!(err instanceof EventConflictError)) throw err;
        // Nothing of the batch was stored: drop the conflicting lines and store the rest.
        const bad = new Set(err.conflicts.map((c) => c.index));
        for (const i of bad) reject(lines[i]!, 'event_id was already used for a different event');
        batch = batch.filter((_, i) => !bad.has(i));
        lines = lines.filter((_, i) => !bad.has(i));
      }
    }
    batch = [];
    lines = [];
  };

  const stream = fromStdin ? stdin.setEncoding('utf8') : createReadStream(path, { encoding: 'utf8' });
  let bytes = 0;
  let lineNo = 0;
  let lastDraw = 0;
  for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
    lineNo += 1;
    bytes += Buffer.byteLength(line) + 1;
    // a UTF-8 byte-order mark would otherwise make the first line invalid JSON
    const text = lineNo === 1 && line.charCodeAt(0) === 0xfeff ? line.slice(1) : line;
    if (text.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      reject(lineNo, 'not valid JSON');
      continue;
    }
    const schemaErrors = check(parsed);
    const errs =
      schemaErrors.length > 0
        ? { raw: [], validation: schemaErrors }
        : eventErrors(parsed as TrustEvent, '', policy.cryptoAssets, Date.now(), { requireHashedIds });
    // The API's own wording: the raw-identifier error wins, as it does over HTTP.
    const first = errs.raw[0] ?? errs.validation[0];
    if (first) {
      reject(lineNo, `${first.field.replace(/^\./, '') || '(event)'}: ${first.message}`);
      continue;
    }
    const event = parsed as TrustEvent;
    batch.push(event);
    lines.push(lineNo);
    if (batch.length >= BATCH) await flush();
    if (!fromStdin && Date.now() - lastDraw > 200) {
      lastDraw = Date.now();
      progress(progressBar(bytes, total, lineNo));
    }
  }
  await flush();
  if (!fromStdin) progress(`${progressBar(total, total, lineNo)}\n`);
  return summary;
}

export async function importEvents(
  store: Store,
  path: string,
  config: Pick<Config, 'policyFile'> & Partial<Pick<Config, 'requireHashedIds'>>,
  environment: Environment = 'live',
): Promise<ImportSummary> {
  const tty = process.stderr.isTTY === true;
  const summary = await importFile(store, path, config, tty ? (s) => process.stderr.write(s) : () => {}, {
    environment,
  });
  process.stdout.write(
    `accepted ${summary.accepted}, duplicates ${summary.duplicates}, rejected ${summary.rejectedCount}\n`,
  );
  for (const r of summary.rejected) process.stdout.write(`  line ${r.line}: ${r.reason}\n`);
  if (summary.rejectedCount > summary.rejected.length)
    process.stdout.write(`  … and ${summary.rejectedCount - summary.rejected.length} more\n`);
  return summary;
}
