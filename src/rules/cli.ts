// `vouch lists import FILE --list NAME` and `vouch rules list` (docs/api.md, "Rules and lists"). Like
// `vouch policy`, the commands act on the store directly; an import goes through the same store
// function as the API (addListEntries: the values checked per kind, the environment's bound, the
// revision moved and the feed recorded), a batch of at most 1,000 values per transaction, so
// running instances apply each batch from their next request.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Option, type Command } from 'commander';
import { ENVIRONMENTS, type Environment } from '../lib/principal.ts';
import { ChangeFeed } from '../store/change-feed.ts';
import { loadConfig, type Config } from '../config/env.ts';
import type { Store } from '../store/db.ts';
import { addListEntries, ListValueError, normaliseValues } from './lists.ts';
import { auditorFor, cliActor } from '../audit-log/auditor.ts';
import { getList } from './list-repository.ts';
import { listRules } from './repository.ts';
import { parseBody } from './rule-body.ts';
import { MAX_VALUES_PER_REQUEST, RULE_STATUSES, type ListKind, type RuleStatus } from './schemas.ts';

interface RulesCliSupport {
  withStore: <T>(config: Config, fn: (store: Store) => Promise<T>) => Promise<T>;
  /** an input the command cannot act on (exit status 2) */
  usageError: (message: string) => Error;
  /** the command ran but not everything succeeded (exit status 1) */
  partialFailure: (message: string) => Error;
}

interface FileEntry {
  line: number;
  value: string;
  reason: string | null;
  expiresAt: number | null;
}

/**
 * One CSV record's fields (RFC 4180 quoting; a record does not span lines), or why it cannot be
 * read: a quote left open, or text after a closing quote, is refused rather than taken as a value.
 */
function csvFields(line: string): string[] | { error: string } {
  const out: string[] = [];
  let field = '';
  let quoted = false;
  let closed = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') {
        quoted = false;
        closed = true;
      } else field += c;
    } else if (c === ',') {
      out.push(field);
      field = '';
      closed = false;
    } else if (closed) {
      if (c.trim() !== '') return { error: `text after a closing quote at column ${i + 1}` };
    } else if (c === '"' && field.trim() === '') {
      quoted = true;
      field = '';
    } else field += c;
  }
  if (quoted) return { error: 'a quote is not closed (a record does not span lines)' };
  out.push(field);
  return out.map((f) => f.trim());
}

/** Reads the file's entries; a line that cannot be read is reported and skipped. */
async function* readEntries(
  file: string,
  format: 'csv' | 'ndjson',
  rejected: (line: number, why: string) => void,
): AsyncGenerator<FileEntry> {
  const input = file === '-' ? process.stdin : createReadStream(file, 'utf8');
  let header: string[] | undefined;
  let n = 0;
  for await (const raw of createInterface({ input, crlfDelay: Infinity })) {
    n++;
    const text = raw.replace(/^\uFEFF/, '');
    if (text.trim() === '') continue;
    let fields: Record<string, unknown>;
    if (format === 'csv') {
      const cells = csvFields(text);
      if (!Array.isArray(cells)) {
        if (!header) throw new Error(`the CSV header cannot be read: ${cells.error}`);
        rejected(n, cells.error);
        continue;
      }
      if (!header) {
        header = cells.map((h) => h.toLowerCase());
        if (!header.includes('value')) throw new Error('the CSV header has no value column');
        continue;
      }
      fields = Object.fromEntries(header.map((h, i) => [h, cells[i] === '' ? undefined : cells[i]]));
    } else {
      try {
        const parsed = JSON.parse(text) as unknown;
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
        fields = parsed as Record<string, unknown>;
      } catch (err) {
        rejected(n, `not a JSON object (${(err as Error).message})`);
        continue;
      }
    }
    const { value, reason, expires_at } = fields;
    if (typeof value !== 'string' || value === '' || value.length > 256) {
      rejected(n, 'value must be a string of 1–256 characters');
      continue;
    }
    if (reason !== undefined && reason !== null && (typeof reason !== 'string' || reason.length > 1000)) {
      rejected(n, 'reason must be a string of at most 1000 characters');
      continue;
    }
    const expiresAt = typeof expires_at === 'string' ? Date.parse(expires_at) : null;
    if (expires_at !== undefined && expires_at !== null && (expiresAt === null || Number.isNaN(expiresAt))) {
      rejected(n, 'expires_at must be an RFC 3339 time');
      continue;
    }
    yield { line: n, value, reason: (reason as string | undefined) ?? null, expiresAt };
  }
}

export interface ImportSummary {
  added: number;
  already_present: number;
  rejected: number;
  failures: Array<{ line: number; reason: string }>;
}

/** Imports FILE into the list, in batches of at most 1,000 entries, each with its own reason and expiry. */
export async function importListFile(
  store: Store,
  environment: Environment,
  listName: string,
  file: string,
  format: 'csv' | 'ndjson',
  by: string,
  options: { requireHashedIds?: boolean } = {},
): Promise<ImportSummary> {
  const list = await getList(store.db, environment, listName);
  if (!list)
    throw new Error(`no list ${listName} in the ${environment} environment (create it first: POST /api/v1/lists)`);
  const summary: ImportSummary = { added: 0, already_present: 0, rejected: 0, failures: [] };
  const reject = (line: number, reason: string) => {
    summary.rejected++;
    if (summary.failures.length < 100) summary.failures.push({ line, reason });
  };
  const feed = new ChangeFeed(store);
  const audit = auditorFor(store, environment, cliActor());
  let batch: FileEntry[] = [];
  const inBatch = new Set<string>();
  const flush = async () => {
    if (batch.length === 0) return;
    const result = await addListEntries(
      store.db,
      environment,
      listName,
      batch.map((e) => e.value),
      by,
      { entries: new Map(batch.map((e) => [e.value, e])), feed, audit, ...options },
      Date.now(),
    );
    summary.added += result.added;
    summary.already_present += result.already_present;
    batch = [];
    inBatch.clear();
  };
  for await (const read of readEntries(file, format, reject)) {
    let entry: FileEntry;
    try {
      // checked one by one, so one bad line is reported and the rest of its batch still goes in;
      // keyed as the list stores it (a country upper-cased)
      entry = { ...read, value: normaliseValues(list.kind as ListKind, [read.value], options)[0]! };
    } catch (err) {
      if (!(err instanceof ListValueError)) throw err;
      reject(read.line, [...err.raw, ...err.invalid].map((e) => e.message).join('; '));
      continue;
    }
    if (entry.expiresAt !== null && entry.expiresAt <= Date.now()) {
      reject(entry.line, 'expires_at is in the past');
      continue;
    }
    // a value repeated in the file goes to the next batch, where it counts as already present
    if (batch.length >= MAX_VALUES_PER_REQUEST || inBatch.has(entry.value)) await flush();
    batch.push(entry);
    inBatch.add(entry.value);
  }
  await flush();
  return summary;
}

const environmentOption = () =>
  new Option('--environment <environment>', 'whose lists and rules: live, or test (test mode)')
    .choices(ENVIRONMENTS)
    .default('live');

export function registerRuleCommands(program: Command, support: RulesCliSupport): void {
  const lists = program.command('lists').description('the lists rules read (docs/api.md, "Rules and lists")');
  lists
    .command('import')
    .description(
      'add the values of a CSV file (a header with a value column; reason and expires_at optional) or NDJSON ({"value", "reason"?, "expires_at"?} per line) to a list, 1,000 a transaction; exit status 1 if any line was rejected',
    )
    .argument('<file>', 'a .csv or .ndjson file, or - for standard input')
    .requiredOption('--list <name>', 'the list to add to (it must exist)')
    .addOption(
      new Option('--format <format>', 'csv or ndjson (default: from the file name; ndjson for -)').choices([
        'csv',
        'ndjson',
      ]),
    )
    .option('--by <name>', 'who the entries are recorded as added by', 'cli')
    .addOption(environmentOption())
    .action(
      async (
        file: string,
        options: { list: string; format?: 'csv' | 'ndjson'; by: string; environment: Environment },
      ) => {
        const config = loadConfig();
        const format = options.format ?? (/\.csv$/i.test(file) ? 'csv' : 'ndjson');
        const summary = await support.withStore(config, async (store) => {
          try {
            return await importListFile(store, options.environment, options.list, file, format, options.by, {
              requireHashedIds: config.requireHashedIds,
            });
          } catch (err) {
            if (err instanceof Error && /^(no list|the CSV header)/.test(err.message))
              throw support.usageError(err.message);
            throw err;
          }
        });
        process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
        if (summary.rejected > 0) throw support.partialFailure(`${summary.rejected} line(s) rejected`);
      },
    );

  const rules = program.command('rules').description('the rules of an environment (docs/rules.md)');
  rules
    .command('list')
    .description('the rules, newest first, tab-separated: id, status, version, action, cap, name')
    .addOption(new Option('--status <status>', 'only rules with this status').choices(RULE_STATUSES))
    .addOption(environmentOption())
    .action(async (options: { status?: RuleStatus; environment: Environment }) => {
      const config = loadConfig();
      await support.withStore(config, async (store) => {
        process.stdout.write('id\tstatus\tversion\taction\tcap\tname\n');
        let after: string | undefined;
        for (;;) {
          const page = await listRules(store.db, options.environment, {
            ...(options.status ? { status: options.status } : {}),
            limit: 200,
            ...(after ? { after } : {}),
          });
          for (const row of page.rows) {
            const body = parseBody(row);
            process.stdout.write(
              `${row.id}\t${row.status}\t${row.version}\t${body.action ?? '-'}\t${body.cap ?? '-'}\t${body.name.replace(/[\t\n]/g, ' ')}\n`,
            );
          }
          if (!page.more) break;
          after = page.rows[page.rows.length - 1]!.id;
        }
      });
    });
}
