// The worker thread of rule tests (docs/rules.md, "Testing a rule"): a million stored decisions
// cost seconds of JSON parsing and rule evaluation, which on the event loop would stall every
// request. `start` names the rule and the settings; then either `read`s of slices of the window
// (the worker reads the store over a connection of its own, store/readers.ts, and answers each
// slice's tally as a part, replay-merge.ts) or the list entries and a series of `page`s fed by the
// main thread, each acknowledged once folded in, and `end`, answered with the result. The rule is
// compiled here: a compiled rule does not cross threads.
import { parentPort } from 'node:worker_threads';
import { compileRule, type CompiledRule } from './compile.ts';
import { evaluateRules } from './decide.ts';
import { ListHistory } from './replay-lists.ts';
import { RuleTestTally } from './replay.ts';
import { columnsRead, type ColumnsRead } from './replay-columns.ts';
import { replayPages } from './replay-store.ts';
import { listHistoryRows } from './list-history-repository.ts';
import { openReader } from '../store/readers.ts';
import type { ReplayTask, ToReplayWorker, FromReplayWorker } from './replay-thread.ts';

const port = parentPort!;
const reply = (message: FromReplayWorker) => port.postMessage(message);

/** The test in progress: its rule compiled once, its lists read once (by the first slice). */
let task: ReplayTask | undefined;
let test: { rule: CompiledRule; columns: ColumnsRead; lists?: ListHistory } | undefined;
let tally: RuleTestTally | undefined;

/** The tested rule as if it were active (a draft or a shadow rule is tested for what it would do). */
function compiled(): NonNullable<typeof test> {
  const t = task!;
  return (test ??= {
    rule: compileRule(
      { id: t.rule.id, version: t.rule.version, status: 'active', body: t.rule.body },
      t.settings.signalNames,
    ),
    columns: columnsRead(t.rule.body),
  });
}

function begin(lists: ListHistory): RuleTestTally {
  const { rule, columns } = compiled();
  return new RuleTestTally(rule, lists, task!.settings, evaluateRules, columns.safeAmount);
}

async function readSlice(message: Extract<ToReplayWorker, { type: 'read' }>): Promise<unknown> {
  const t = compiled();
  const db = openReader(message.source);
  try {
    t.lists ??= new ListHistory(await listHistoryRows(db, message.environment, t.rule.lists));
    const run = begin(t.lists);
    for await (const page of replayPages(db, message.environment, message.window, t.columns))
      for (const row of page) run.add(row);
    return run.part();
  } finally {
    await db.destroy();
  }
}

const failure = (err: unknown): FromReplayWorker => ({
  type: 'error',
  message: err instanceof Error ? err.message : String(err),
});

port.on('message', (message: ToReplayWorker) => {
  try {
    if (message.type === 'start') {
      task = message.task;
      test = undefined;
      tally = undefined;
    } else if (message.type === 'lists') {
      tally = begin(new ListHistory(message.entries));
      reply({ type: 'ack' });
    } else if (message.type === 'page') {
      tally ??= begin(new ListHistory([]));
      for (const row of message.rows) tally.add(row);
      reply({ type: 'ack' });
    } else if (message.type === 'end') {
      const value = (tally ?? begin(new ListHistory([]))).result();
      tally = undefined;
      reply({ type: 'result', value });
    } else {
      readSlice(message).then(
        (value) => reply({ type: 'result', value }),
        (err: unknown) => reply(failure(err)),
      );
    }
  } catch (err) {
    reply(failure(err));
  }
});
