// One peer moves a score by at most the documented amount (docs/network.md, "The signal"): a
// malicious peer at weight 10 that flags every identifier of a victim, with any counts, moves the
// log-odds by at most PEER_CAP (half the policy's weight) when alone, and adds no more to the signal
// beside an honest peer than any ordinary agreeing peer would; only two independent peers agreeing
// reach the full weight, and a third adds nothing.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { bearer, describeEachBackend } from '../helpers/app.ts';
import { networkDb } from '../../src/network/tables.ts';
import { PEER_CAP } from '../../src/model/network-signal.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { standInPeer } from './support.ts';

const VICTIM = 'b4'.repeat(32);
const IDS = [
  { type: 'phone', hash: '1a'.repeat(32) },
  { type: 'email', hash: '2b'.repeat(32) },
  { type: 'bank_account', hash: '3c'.repeat(32) },
  { type: 'device', hash: '4d'.repeat(32) },
];
const MONTH = new Date().toISOString().slice(0, 7);
const WEIGHT = DEFAULT_POLICY.weights.network_flags;
const logit = (score: number) => Math.log(score / (100 - score));

describeEachBackend('one peer moves a score by at most half the weight', (ctx) => {
  let admin: string;
  const peers: Record<string, string> = {};
  const db = () => networkDb(ctx().store.db);
  const score = async () => {
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/trust/score',
      headers: bearer(admin),
      payload: { entity_id: VICTIM, amount: 100, currency: 'USD' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as { score: number; signals: Array<{ name: string; value: number; weight: number }> };
    return { score: body.score, network: body.signals.find((s) => s.name === 'network_flags')?.value ?? 0 };
  };
  const flagAll = async (peer: string, ids: typeof IDS, kinds: Record<string, number>) => {
    await db()
      .insertInto('network_matches')
      .values(
        ids.map((id) => ({
          peer_id: peers[peer]!,
          id_type: id.type,
          hash: id.hash,
          label: JSON.stringify({ kinds, latest_month: MONTH }),
          matched_at: Date.now(),
        })),
      )
      .execute();
    await db()
      .updateTable('network_identity')
      .set((eb) => ({ state_version: eb('state_version', '+', 1) }))
      .execute();
    ctx().store.changes.localWrite();
  };
  const unflag = async (peer: string) => {
    await db().deleteFrom('network_matches').where('peer_id', '=', peers[peer]!).execute();
    await db()
      .updateTable('network_identity')
      .set((eb) => ({ state_version: eb('state_version', '+', 1) }))
      .execute();
    ctx().store.changes.localWrite();
  };

  before(async () => {
    admin = await ctx().token();
    for (const [i, name] of ['honest', 'second', 'third', 'malicious'].entries()) {
      const res = await ctx().inject({
        method: 'POST',
        url: '/api/v1/network/peers',
        headers: bearer(admin),
        payload: {
          name,
          url: `https://93.184.216.${40 + i}`,
          signing_key: standInPeer().signingKey,
          weight: name === 'malicious' ? 10 : 1,
        },
      });
      assert.equal(res.statusCode, 201, res.body);
      peers[name] = res.json().id;
    }
    const res = await ctx().inject({
      method: 'POST',
      url: '/api/v1/trust/events',
      headers: bearer(admin),
      payload: {
        events: [
          {
            event_id: 'victim-linked',
            type: 'identifier.linked',
            entity_id: VICTIM,
            occurred_at: new Date(Date.now() - 60_000).toISOString(),
            linked_identifiers: IDS,
          },
        ],
      },
    });
    assert.equal(res.statusCode, 200, res.body);
  });

  test('a lone malicious peer flagging every identifier, at weight 10: at most half the weight in log-odds', async () => {
    const clean = await score();
    assert.equal(clean.network, 0);
    await flagAll('malicious', IDS, { fraud_report: 50, chargeback: 50, blocklisted: 9, dispute_lost: 50 });
    const attacked = await score();
    await unflag('malicious');
    assert.equal(attacked.network, PEER_CAP);
    // Scores are whole numbers: allow their rounding, nothing more.
    assert.ok(
      logit(attacked.score - 0.5) - logit(clean.score + 0.5) <= PEER_CAP * WEIGHT + 1e-9,
      `${clean.score} -> ${attacked.score}`,
    );
  });

  test('beside an honest peer, the malicious one adds at most half the weight to the term (it added the full weight before), and no more than any agreeing peer', async () => {
    await flagAll('honest', IDS.slice(0, 1), { chargeback: 1 });
    const honest = await score();
    assert.equal(honest.network, PEER_CAP);
    await flagAll('malicious', IDS, { fraud_report: 50, chargeback: 50 });
    const withMalicious = await score();
    await unflag('malicious');
    assert.ok(
      withMalicious.network - honest.network <= PEER_CAP + 1e-9,
      `${honest.network} -> ${withMalicious.network}`,
    );
    // Weight 10, every identifier, any counts: the same as one ordinary peer agreeing.
    await flagAll('second', IDS.slice(1, 2), { fraud_report: 1 });
    const withSecond = await score();
    await unflag('second');
    assert.deepEqual(withMalicious, withSecond);
  });

  test('two independent honest peers reach the full weight; a third adds nothing', async () => {
    await flagAll('second', IDS.slice(1, 2), { fraud_report: 1 });
    assert.equal((await score()).network, 1);
    await flagAll('third', IDS.slice(2, 3), { blocklisted: 1 });
    assert.equal((await score()).network, 1);
  });
});
