// `vouch labels import FILE` (issue 20 item 6): back-fills outcome labels through the service's own
// HTTP API (POST /api/v1/labels, OpenAPI labelDecisions), in chunks of up to 1,000, with the caller's own
// credentials, so every label is checked, owned and audited exactly as a label sent over HTTP.
//   VOUCH_URL (default http://127.0.0.1:8080), and VOUCH_API_KEY or VOUCH_CLIENT_ID + VOUCH_CLIENT_SECRET
// Progress goes to standard error, the summary to standard output; exit status 1 if any label failed.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { guessFormat, parseLabels, type FileLabel, type LabelFormat } from './label-file.ts';
import { progressLine } from '../lib/progress.ts';

export interface LabelCliSupport {
  /** an input the command cannot act on (exit status 2) */
  usageError: (message: string) => Error;
  /** the command ran but not everything succeeded (exit status 1) */
  partialFailure: (message: string) => Error;
}

/** The bulk route's limits (src/audit/bulk-labels.ts): items per call, and a body under its 1 MiB. */
const CHUNK_ITEMS = 1000;
const CHUNK_BYTES = 960 * 1024;
const ATTEMPTS = 5;

interface Credentials {
  baseUrl: string;
  apiKey?: string;
  clientId?: string;
  clientSecret?: string;
}

function credentialsFromEnv(env: NodeJS.ProcessEnv, usageError: (m: string) => Error): Credentials {
  const baseUrl = env.VOUCH_URL ?? 'http://127.0.0.1:8080';
  try {
    new URL(baseUrl);
  } catch {
    throw usageError('VOUCH_URL must be an absolute URL such as http://127.0.0.1:8080');
  }
  if (env.VOUCH_API_KEY) return { baseUrl, apiKey: env.VOUCH_API_KEY };
  if (env.VOUCH_CLIENT_ID && env.VOUCH_CLIENT_SECRET)
    return { baseUrl, clientId: env.VOUCH_CLIENT_ID, clientSecret: env.VOUCH_CLIENT_SECRET };
  throw usageError('set VOUCH_API_KEY, or VOUCH_CLIENT_ID and VOUCH_CLIENT_SECRET (a credential with labels:write)');
}

interface ImportSummary {
  labelled: number;
  failed: number;
  /** each failure: the file line, and the problem's code and detail (never a credential) */
  failures: { line: number; code: string; detail: string }[];
}

interface Problem {
  status?: number;
  code?: string;
  detail?: string;
  errors?: { field: string; message: string }[];
}

const describeProblem = (p: Problem): string =>
  [p.detail ?? 'refused', ...(p.errors ?? []).map((e) => `${e.field} ${e.message}`)].join(' ');

/** Sends the labels and returns what became of each; `progress` hears after every chunk. */
async function sendLabels(
  credentials: Credentials,
  labels: readonly FileLabel[],
  progress: (done: number, failed: number) => void = () => {},
): Promise<ImportSummary> {
  const summary: ImportSummary = { labelled: 0, failed: 0, failures: [] };
  const client = new LabelClient(credentials);
  for (const chunk of chunks(labels)) {
    const results = await client.post(chunk.map((l) => l.body));
    results.forEach((result, i) => {
      const problem = result as Problem;
      if (typeof problem.status === 'number' && typeof problem.code === 'string') {
        summary.failed++;
        summary.failures.push({ line: chunk[i]!.line, code: problem.code, detail: describeProblem(problem) });
      } else {
        summary.labelled++;
      }
    });
    progress(summary.labelled + summary.failed, summary.failed);
  }
  return summary;
}

/** Up to CHUNK_ITEMS labels whose JSON stays under CHUNK_BYTES (long notes make fewer fit). */
function* chunks(labels: readonly FileLabel[]): Generator<FileLabel[]> {
  let chunk: FileLabel[] = [];
  let bytes = 0;
  for (const label of labels) {
    const size = Buffer.byteLength(JSON.stringify(label.body)) + 1;
    if (chunk.length > 0 && (chunk.length === CHUNK_ITEMS || bytes + size > CHUNK_BYTES)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(label);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}

class LabelClient {
  private token: string | undefined;

  constructor(private readonly credentials: Credentials) {}

  /** One chunk; a 429/503 or a network error is retried with the same Idempotency-Key. */
  async post(labels: unknown[]): Promise<unknown[]> {
    const body = JSON.stringify({ labels });
    const key = randomUUID();
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(new URL('/api/v1/labels', this.credentials.baseUrl), {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', 'idempotency-key': key, ...(await this.auth()) },
        });
      } catch (err) {
        if (attempt >= ATTEMPTS) throw new Error(`cannot reach ${this.credentials.baseUrl}: ${(err as Error).message}`);
        await wait(attempt, null);
        continue;
      }
      const text = await res.text();
      if (res.status === 200) return (JSON.parse(text) as { results: unknown[] }).results;
      if (res.status === 401 && this.credentials.clientId && !refreshed) {
        refreshed = true;
        this.token = undefined;
        continue;
      }
      if ((res.status === 429 || res.status === 503) && attempt < ATTEMPTS) {
        await wait(attempt, res.headers.get('retry-after'));
        continue;
      }
      throw new Error(`POST /api/v1/labels answered ${res.status}: ${describeProblem(parseProblem(text))}`);
    }
  }

  private async auth(): Promise<Record<string, string>> {
    const { apiKey, clientId, clientSecret, baseUrl } = this.credentials;
    if (apiKey) return { 'x-api-key': apiKey };
    if (!this.token) {
      const res = await fetch(new URL('/api/v1/auth/token', baseUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: clientId, client_secret: clientSecret }),
      });
      const text = await res.text();
      if (res.status !== 200)
        throw new Error(`the token request answered ${res.status}: ${describeProblem(parseProblem(text))}`);
      this.token = (JSON.parse(text) as { access_token: string }).access_token;
    }
    return { authorization: `Bearer ${this.token}` };
  }
}

function parseProblem(text: string): Problem {
  try {
    return JSON.parse(text) as Problem;
  } catch {
    return { detail: 'no problem document' };
  }
}

/** Retry-After when the service gives one (capped at 30 s), else 0.5 s, 1 s, 2 s, … */
function wait(attempt: number, retryAfter: string | null): Promise<void> {
  const seconds =
    retryAfter !== null && /^\d+$/.test(retryAfter) ? Math.min(30, Number(retryAfter)) : 0.5 * 2 ** (attempt - 1);
  return new Promise((resolve) => setTimeout(resolve, seconds * 1000));
}

/** The sending's progress on standard error (src/lib/progress.ts), after every chunk. */
function labelProgress(total: number): (done: number, failed: number) => void {
  const line = progressLine();
  return (done, failed) => {
    const text = `labels: ${done}/${total} sent, ${failed} failed`;
    if (done === total) line.end(text);
    else line.update(text);
  };
}

export function registerLabelCommands(program: Command, { usageError, partialFailure }: LabelCliSupport): void {
  program
    .command('labels')
    .description('outcome labels of score decisions')
    .command('import')
    .description(
      'label decisions from a CSV (decision_id,label,note) or JSON Lines file through the HTTP API; exit status 1 if any failed',
    )
    .argument('<file>', 'a .csv or .jsonl file, or - for standard input')
    .addOption(
      new Option('--format <format>', 'csv or jsonl (default: from the file name, else its first line)').choices([
        'csv',
        'jsonl',
      ]),
    )
    .action(async (file: string, options: { format?: LabelFormat }) => {
      const credentials = credentialsFromEnv(process.env, usageError);
      let text: string;
      try {
        text = readFileSync(file === '-' ? 0 : file, 'utf8');
      } catch (err) {
        throw usageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
      const parsed = parseLabels(text, options.format ?? guessFormat(file, text));
      if (parsed.labels.length === 0 && parsed.errors.length > 0 && parsed.errors[0]!.line <= 1) {
        throw usageError(`${file}: line ${parsed.errors[0]!.line}: ${parsed.errors[0]!.message}`);
      }
      const summary = await sendLabels(credentials, parsed.labels, labelProgress(parsed.labels.length));
      const failures = [
        ...parsed.errors.map((e) => ({ line: e.line, code: 'unreadable', detail: e.message })),
        ...summary.failures,
      ].sort((a, b) => a.line - b.line);
      for (const f of failures.slice(0, 50)) process.stderr.write(`line ${f.line}: ${f.code}: ${f.detail}\n`);
      if (failures.length > 50) process.stderr.write(`… and ${failures.length - 50} more\n`);
      process.stdout.write(`${JSON.stringify({ labelled: summary.labelled, failed: failures.length })}\n`);
      if (failures.length > 0) throw partialFailure(`${failures.length} label(s) failed`);
    });
}
