// The worker thread of rule tests (docs/rules.md, "Testing a rule"): a million stored decisions
// cost tens of seconds of JSON parsing and rule evaluation, which on the event loop would stall
// every request. `start` names the rule and the settings; then either `read` (the worker reads
// the store over a connection of its own, store/readers.ts) or the list entries and a series
// of `page`s fed by the main thread, each acknowledged once folded in, and `end`. The result (or
// the error) is the last reply. The rule is compiled here: a compiled rule does not cross threads.
import { parentPort } from 'node:worker_threads';
import { compileRule } from './compile.ts';
import { evaluateRules } from './decide.ts';
import { ListHistory } from './replay-lists.ts';
import { RuleTestTally } from './replay.ts';
import { columnsRead } from './replay-columns.ts';
import { listHistoryRows, replayPages } from './replay-store.ts';
import { openReader } from '../store/readers.ts';
import type { ReplayTask, ToReplayWorker, FromReplayWorker } from './replay-thread.ts';
import type { ListEntryRow } from './replay-lists.ts';

const port = parentPort!;
const reply = (message: FromReplayWorker) => port.postMessage(message);

let task: ReplayTask | undefined;
let tally: RuleTestTally | undefined;

/** The tested rule as if it were active (a draft or a shadow rule is tested for what it would do). */
const compiled = (t: ReplayTask) =>
  compileRule({ id: t.rule.id, version: t.rule.version, status: 'active', body: t.rule.body }, t.settings.signalNames);

function begin(entries: readonly ListEntryRow[], rule = compiled(task!)): RuleTestTally {
  return new RuleTestTally(rule, new ListHistory(entries), task!.settings, evaluateRules);
}

async function readAll(message: Extract<ToReplayWorker, { type: 'read' }>): Promise<unknown> {
  const db = openReader(message.source);
  try {
    const rule = compiled(task!);
    const run = begin(await listHistoryRows(db, message.environment, rule.lists), rule);
    for await (const page of replayPages(db, message.environment, message.window, columnsRead(task!.rule.body)))
      for (const row of page) run.add(row);
    return run.result();
  } finally {
    await db.destroy();
  }
}

port.on('message', (message: ToReplayWorker) => {
  try {
    if (message.type === 'start') {
      task = message.task;
      tally = undefined;
    } else if (message.type === 'lists') {
      tally = begin(message.entries);
      reply({ type: 'ack' });
    } else if (message.type === 'page') {
      tally ??= begin([]);
      for (const row of message.rows) tally.add(row);
      reply({ type: 'ack' });
    } else if (message.type === 'end') {
      const value = (tally ?? begin([])).result();
      tally = undefined;
      reply({ type: 'result', value });
    } else {
      readAll(message).then(
        (value) => reply({ type: 'result', value }),
        (err: unknown) => reply({ type: 'error', message: err instanceof Error ? err.message : String(err) }),
      );
    }
  } catch (err) {
    reply({ type: 'error', message: err instanceof Error ? err.message : String(err) });
  }
});
