// The published set, incremental (docs/network.md, "Publishing"): a refresh looks only at what
// changed since the last one (flag events and links ingested after its watermark), in chunks;
// unblocklisting, a counterparty's lost dispute and erasure change or withdraw entries; a pull from
// the start that the set changes under still delivers the withdrawal at the next pull; entity ids
// are published under the `entity` type only with the common hashing on.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { bearer, describeEachBackend } from '../helpers/app.ts';
import { resolveKeyEncryption } from '../../src/auth/kek.ts';
import { loadIdentity, type NetworkIdentity } from '../../src/network/identity.ts';
import { refreshPublished } from '../../src/network/publisher.ts';
import { networkDb } from '../../src/network/tables.ts';
import { resolveAt, signedInject, standInPeer } from './support.ts';

const hex = (n: number, salt = 'a') =>
  `${salt}${n}`
    .padStart(8, '0')
    .repeat(8)
    .slice(0, 64)
    .replace(/[^0-9a-f]/g, 'f');
const at = () => new Date(Date.now() - 60_000).toISOString();

describeEachBackend('the published set, incremental', (ctx) => {
  let admin: string;
  let identity: NetworkIdentity;
  const peer = standInPeer();
  const db = () => networkDb(ctx().store.db);
  const refresh = (entityIds = false) => refreshPublished(ctx().store, identity, { entityIds });
  const events = async (list: object[]) => {
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/trust/events',
      headers: bearer(admin),
      payload: { events: list },
    });
    assert.equal(res.statusCode, 200, res.body);
  };
  /** Everything ingested so far is older than any refresh's look-back. */
  const age = async () => {
    await db().updateTable('events').set({ ingested_at: 1 }).execute();
    await db().updateTable('identifiers').set({ created_at: 1 }).execute();
  };
  const pull = async (query = '') => {
    const res = await signedInject(ctx(), peer, 'GET', `/network/v1/flags${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as {
      entries: Array<{ tag: string; sealed?: string; withdrawn?: true }>;
      next_cursor: string | null;
      since: string;
    };
  };

  before(async () => {
    admin = await ctx().token();
    identity = await loadIdentity(db(), resolveKeyEncryption(ctx().config, ctx().store));
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/network/peers',
      headers: bearer(admin),
      payload: { name: 'reader', url: 'https://93.184.216.34', signing_key: peer.signingKey },
    });
    assert.equal(res.statusCode, 201, res.body);
  });

  test('a refresh looks only at what changed since the last one, and chunks a large change', async () => {
    // 600 flagged identifiers: two chunks, the PRF of each in the worker thread.
    await events(
      Array.from({ length: 600 }, (_, i) => ({
        event_id: `bulk-${i}`,
        type: 'fraud.reported',
        entity_id: hex(i, 'b'),
        occurred_at: at(),
        linked_identifiers: [{ type: 'phone', hash: hex(i, 'c') }],
      })),
    );
    const first = await refresh();
    assert.deepEqual(first, { published: 600, examined: 600, changed: 600 });
    await age();
    const texts: string[] = [];
    const sqlite = ctx().store.sqlite;
    const prepare = sqlite?.prepare;
    if (sqlite && prepare)
      sqlite.prepare = ((text: string) => (texts.push(text), prepare.call(sqlite, text))) as typeof prepare;
    try {
      assert.deepEqual(
        await refresh(),
        { published: 600, examined: 0, changed: 0 },
        'nothing changed: nothing looked at',
      );
    } finally {
      if (sqlite && prepare) sqlite.prepare = prepare;
    }
    if (sqlite) {
      // What changed is found by index: the flag events by the partial index, the links by their creation time.
      const plan = (pattern: RegExp) => {
        const text = texts.find((t) => pattern.test(t));
        assert.ok(text, `the query ${pattern} ran`);
        const args = Array.from({ length: (text.match(/\?/g) ?? []).length }, (_, i) => (i === 0 ? 'live' : 0));
        return (sqlite.prepare(`explain query plan ${text}`).all(...args) as Array<{ detail: string }>)
          .map((r) => r.detail)
          .join('\n');
      };
      assert.match(
        plan(/from "events" where .*"ingested_at" >=/),
        /USING INDEX events_publish \(environment=\? AND ingested_at>\?\)/,
      );
      assert.match(
        plan(/from "identifiers" where .*"created_at" >=/),
        // identifiers is WITHOUT ROWID (036): its index holds the key, so it may cover the read outright.
        /USING (COVERING )?INDEX identifiers_created \(environment=\? AND created_at>\?\)/,
      );
    }
    // One more flag, one more link to a flagged entity, one unflagged link: three looked at, two published.
    await events([
      {
        event_id: 'one-more',
        type: 'chargeback',
        entity_id: hex(1000, 'b'),
        occurred_at: at(),
        linked_identifiers: [{ type: 'email', hash: hex(1000, 'c') }],
      },
      {
        event_id: 'relink',
        type: 'identifier.linked',
        entity_id: hex(0, 'b'),
        occurred_at: at(),
        linked_identifiers: [{ type: 'device', hash: hex(1001, 'c') }],
      },
      {
        event_id: 'clean',
        type: 'identifier.linked',
        entity_id: hex(2000, 'b'),
        occurred_at: at(),
        linked_identifiers: [{ type: 'device', hash: hex(2000, 'c') }],
      },
    ]);
    assert.deepEqual(
      await refresh(),
      { published: 602, examined: 3, changed: 2 },
      "the new flag's identifier and the two new links",
    );
    // Pulled page by page from the stored set, nothing recomputed per pull.
    let seen = 0;
    let cursor: string | null = null;
    do {
      const page = await pull(`?limit=250${cursor ? `&cursor=${cursor}` : ''}`);
      seen += page.entries.length;
      cursor = page.next_cursor;
    } while (cursor);
    assert.equal(seen, 602);
  });

  test("unblocklisting and a counterparty's lost dispute change the set; erasure withdraws at once", async () => {
    await age();
    await refresh();
    const [blocked, loser, winner] = [hex(1, 'd'), hex(2, 'd'), hex(3, 'd')];
    const [blockedPhone, loserPhone] = [hex(1, 'e'), hex(2, 'e')];
    await events([
      {
        event_id: 'blk',
        type: 'entity.blocklisted',
        entity_id: blocked,
        occurred_at: at(),
        linked_identifiers: [{ type: 'phone', hash: blockedPhone }],
      },
      {
        event_id: 'loser-link',
        type: 'identifier.linked',
        entity_id: loser,
        occurred_at: at(),
        linked_identifiers: [{ type: 'phone', hash: loserPhone }],
      },
    ]);
    await refresh();
    const { since } = await pull();
    const [b, l] = await resolveAt(ctx(), peer, identity.oprfPublicKey, [
      { type: 'phone', hash: blockedPhone },
      { type: 'phone', hash: loserPhone },
    ]);
    await age();
    // The winner's event is the loser's lost dispute; the unblocklisting withdraws the other.
    await events([
      {
        event_id: 'dsp-r',
        type: 'dispute.resolved',
        entity_id: winner,
        counterparty_id: loser,
        trade_id: 't-1',
        resolution: 'in_favor',
        occurred_at: at(),
      },
      { event_id: 'unblk', type: 'entity.unblocklisted', entity_id: blocked, occurred_at: at() },
    ]);
    await refresh();
    const changes = (await pull(`?since=${since}`)).entries;
    assert.deepEqual(
      changes.find((e) => e.tag === b!.tag),
      { tag: b!.tag, withdrawn: true },
    );
    assert.deepEqual(l!.open(changes.find((e) => e.tag === l!.tag)!.sealed!)?.kinds, { dispute_lost: 1 });
    // Erasure withdraws in its own transaction: no refresh needed.
    const { since: after } = await pull(`?since=${since}`);
    assert.equal(
      (await ctx().inject({ method: 'DELETE', url: `/api/v1/trust/entities/${loser}`, headers: bearer(admin) }))
        .statusCode,
      200,
    );
    const rows = await db()
      .selectFrom('network_published')
      .select(['tag', 'label', 'source'])
      .where('tag', '=', l!.tag)
      .execute();
    assert.deepEqual(rows, [{ tag: l!.tag, label: null, source: null }]);
    assert.deepEqual((await pull(`?since=${after}`)).entries, [{ tag: l!.tag, withdrawn: true }]);
  });

  test('a pull from the start that the set changes under: the withdrawal arrives at the next pull', async () => {
    const first = await pull('?limit=1');
    assert.ok(first.next_cursor);
    const [victim] = await db()
      .selectFrom('network_published')
      .select('tag')
      .where('label', 'is not', null)
      .orderBy('seq')
      .limit(1)
      .execute();
    assert.equal(victim!.tag, first.entries[0]!.tag);
    // Withdrawn after the page that carried it: later pages of a pull from the start carry no tombstones.
    await db()
      .updateTable('network_published')
      .set({ label: null, source: null, label_key: null, seq: 1e9 })
      .where('tag', '=', victim!.tag)
      .execute();
    let cursor: string | null = first.next_cursor;
    let since = first.since;
    while (cursor) {
      const page = await pull(`?limit=1000&cursor=${cursor}`);
      cursor = page.next_cursor;
      since = page.since;
    }
    assert.ok((await pull(`?since=${since}`)).entries.some((e) => e.tag === victim!.tag && e.withdrawn === true));
  });

  test('entity ids: published under `entity` only with the common hashing on, withdrawn when it goes off', async () => {
    const flagged = hex(7, 'f');
    await events([{ event_id: 'ent', type: 'fraud.reported', entity_id: flagged, occurred_at: at() }]);
    await refresh(false);
    const [mine] = await resolveAt(ctx(), peer, identity.oprfPublicKey, [{ type: 'entity', hash: flagged }]);
    const held = () =>
      db().selectFrom('network_published').select(['label', 'id_type']).where('tag', '=', mine!.tag).executeTakeFirst();
    assert.equal(await held(), undefined);
    const on = await refresh(true);
    assert.ok(on.examined > 600, 'switching it on refreshes from the start');
    assert.deepEqual(await held(), {
      label: JSON.stringify({ kinds: { fraud_report: 1 }, latest_month: at().slice(0, 7) }),
      id_type: 'entity',
    });
    await refresh(false);
    assert.deepEqual(await held(), { label: null, id_type: null });
  });
});
