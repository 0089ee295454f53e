// Compiled hot shapes are kept by the dialect they were compiled for (src/store/prepared.ts): a
// process holding stores of both never hands PostgreSQL's prepared-statement path SQLite's text,
// nor a SQLite plan check PostgreSQL's.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { backends, freshStore, type TestStore } from '../helpers/app.ts';
import { PREPARED_TEXTS, PreparedQuery } from '../../src/store/prepared.ts';

const opened: TestStore[] = [];
after(async () => {
  for (const s of opened) await s.drop();
});

for (const backend of backends()) {
  test(`a shape compiled on ${backend} is kept as ${backend}'s text only [${backend}]`, async () => {
    const t = await freshStore(backend);
    opened.push(t);
    const other = backend === 'sqlite' ? 'postgres' : 'sqlite';
    // A shape no other file compiles: the name of its column is this test's own.
    const alias = `prepared_texts_${backend}`;
    const query = new PreparedQuery<[string], { id: string }>(t.store.db as never, 1, (db, name) =>
      (db as unknown as typeof t.store.db)
        .selectFrom('lists')
        .select(`id as ${alias}` as 'id')
        .where('name', '=', name as string),
    );
    assert.deepEqual(await query.execute('none'), []);
    const text = query.bind('none').text;
    assert.ok(text.includes(alias), text);
    assert.ok(PREPARED_TEXTS[backend].has(text), `${backend}'s set holds ${text}`);
    assert.ok(![...PREPARED_TEXTS[other]].some((t) => t.includes(alias)), `${other}'s set does not`);
  });
}
