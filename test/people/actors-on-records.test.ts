// docs/api.md, "Audit log" ("Who"): every record that keeps who changed it answers that actor as
// `{type, id, name}` beside the id it always answered (`created_by` + `created_by_actor`, …), and
// the records that kept no one (a policy's activation, a key, a user's invitation, the settings)
// answer it as a `*_by` object of their own. Names are read when the record is: a renamed person
// shows their new name, a deactivated one is still named, and an id found nowhere (the command
// line, a deleted client) is a client named by its id (docs/decisions.md, 2026-11-29).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer } from '../helpers/app.ts';
import { asPerson, person, type Person } from '../helpers/people.ts';
import { seedReviews } from '../reviews/support.ts';
import { makeKey } from '../audit-log/support.ts';
import { DEFAULT_POLICY } from '../../src/model/policy.ts';
import { SCOPES } from '../../src/lib/principal.ts';
import { resolveActors } from '../../src/audit-log/actors.ts';

interface Actor {
  type: 'user' | 'client';
  id: string;
  name: string;
}
type Body = Record<string, unknown>;

describeEachBackend('actors on records', (ctx) => {
  /** Who acts: a person (session), a machine client (token) and an API key, each with its expected actor. */
  interface Who {
    headers: Record<string, string>;
    actor: Actor;
  }
  let admin = '';
  let desk: Person;
  let second: Person;
  const actors: Record<'person' | 'client' | 'key', Who> = {} as never;

  const call = async (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: Body) => {
    const res = await ctx().inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) });
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return (res.statusCode === 204 ? {} : res.json()) as Body;
  };
  const read = (url: string) => call(actors.client, 'GET', url);
  const nameOf = async (userId: string) =>
    ((await ctx().inject({ method: 'GET', url: `/api/v1/users/${userId}`, headers: bearer(admin) })).json() as Body)
      .name as string;

  before(async () => {
    admin = await ctx().token();
    desk = await person(ctx(), 'admin', admin);
    second = await person(ctx(), 'admin', admin);
    actors.person = { headers: asPerson(desk), actor: { type: 'user', id: desk.id, name: await nameOf(desk.id) } };
    const machine = await ctx().client([...SCOPES], 'admin');
    const token = await ctx().inject({
      method: 'POST',
      url: '/api/v1/auth/token',
      payload: { client_id: machine.id, client_secret: machine.secret },
    });
    actors.client = {
      headers: bearer(token.json().access_token as string),
      actor: { type: 'client', id: machine.id, name: 'test' },
    };
    const key = await makeKey(ctx(), 'desk robot', 'admin');
    actors.key = { headers: { 'x-api-key': key.key }, actor: { type: 'client', id: key.id, name: 'desk robot' } };
  });

  const each = ['person', 'client', 'key'] as const;

  test('a rule, its versions and its history name who created and changed it', async () => {
    for (const kind of each) {
      const who = actors[kind];
      const created = await call(who, 'POST', '/api/v1/rules', {
        name: `by ${kind}`,
        condition: 'amount > 5.0',
        action: 'review',
      });
      assert.deepEqual(created.created_by_actor, who.actor);
      assert.equal(created.created_by, who.actor.id, 'the id stays as it was');
      // the next version by another actor
      const other = actors[kind === 'person' ? 'client' : 'person'];
      const changed = await call(other, 'PATCH', `/api/v1/rules/${created.id as string}`, { description: 'edited' });
      assert.deepEqual(changed.created_by_actor, who.actor);
      assert.deepEqual(changed.updated_by_actor, other.actor);
      assert.equal(changed.updated_by, other.actor.id);
      const versions = (await read(`/api/v1/rules/${created.id as string}/versions`)).data as Body[];
      assert.deepEqual(
        versions.map((v) => [v.version, v.changed_by, v.changed_by_actor]),
        [
          [2, other.actor.id, other.actor],
          [1, who.actor.id, who.actor],
        ],
      );
      assert.deepEqual((await read(`/api/v1/rules/${created.id as string}`)).updated_by_actor, other.actor);
    }
  });

  test('a list and its entries name who created the list and who added each entry', async () => {
    const made = await call(actors.person, 'POST', '/api/v1/lists', { name: 'actor-countries', kind: 'country' });
    assert.deepEqual(made.created_by_actor, actors.person.actor);
    await call(actors.client, 'POST', '/api/v1/lists/actor-countries/entries', { values: ['FR'] });
    await call(actors.key, 'POST', '/api/v1/lists/actor-countries/entries', { values: ['DE'] });
    await call(actors.person, 'POST', '/api/v1/lists/actor-countries/entries', { values: ['IT'] });
    const entries = (await read('/api/v1/lists/actor-countries/entries')).data as Body[];
    assert.deepEqual(
      entries.map((e) => [e.value, e.added_by, e.added_by_actor]),
      [
        ['DE', actors.key.actor.id, actors.key.actor],
        ['FR', actors.client.actor.id, actors.client.actor],
        ['IT', actors.person.actor.id, actors.person.actor],
      ],
    );
    const lists = (await read('/api/v1/lists')).data as Body[];
    assert.deepEqual(lists.find((l) => l.name === 'actor-countries')?.created_by_actor, actors.person.actor);
    assert.deepEqual((await read('/api/v1/lists/actor-countries')).created_by_actor, actors.person.actor);
  });

  test('a resolved review and the label it gave name the resolver; an open review names no one', async () => {
    for (const kind of each) {
      const who = actors[kind];
      const [seeded, open] = await seedReviews(ctx().store.db, [{ owner: actors.client.actor.id }, { owner: 'x' }]);
      const id = seeded!.review!.id;
      const resolved = await call(who, 'POST', `/api/v1/reviews/${id}/resolve`, { resolution: 'decline' });
      assert.deepEqual(resolved.resolved_by_actor, who.actor);
      const detail = await read(`/api/v1/reviews/${id}`);
      assert.deepEqual(detail.resolved_by_actor, who.actor);
      const label = (detail.decision as Body).label as Body;
      assert.equal(label.source, 'review');
      assert.deepEqual(label.labelled_by_actor, who.actor);
      const decision = await read(`/api/v1/decisions/${seeded!.id}`);
      assert.deepEqual((decision.label as Body).labelled_by_actor, who.actor);
      assert.equal((await read(`/api/v1/reviews/${open!.review!.id}`)).resolved_by_actor, null);
    }
  });

  test('an API label, one by one and in bulk, names who labelled; a decision read answers it', async () => {
    const rows = await seedReviews(ctx().store.db, [
      { owner: actors.client.actor.id, review: false },
      { owner: actors.client.actor.id, review: false },
      { owner: actors.client.actor.id, review: false },
    ]);
    const [one, two, three] = rows.map((r) => r.id) as [string, string, string];
    const single = await call(actors.person, 'POST', `/api/v1/decisions/${one}/label`, { label: 'fraud' });
    assert.deepEqual(single.labelled_by_actor, actors.person.actor);
    const bulk = await call(actors.key, 'POST', '/api/v1/labels', {
      labels: [
        { decision_id: two, label: 'legit' },
        { decision_id: three, label: 'fraud' },
      ],
    });
    for (const item of bulk.results as Body[]) assert.deepEqual(item.labelled_by_actor, actors.key.actor);
    const listed = (await read('/api/v1/decisions?limit=100')).data as Body[];
    const labelOf = (id: string) => (listed.find((d) => d.id === id)?.label as Body).labelled_by_actor;
    assert.deepEqual(labelOf(one), actors.person.actor);
    assert.deepEqual(labelOf(two), actors.key.actor);
    assert.deepEqual(labelOf(three), actors.key.actor);
    const unlabelled = listed.find((d) => d.label === null);
    assert.ok(unlabelled === undefined || unlabelled.label === null);
  });

  test('a policy names who uploaded it and who activated it, four-eyes approval on behalf of the requester', async () => {
    const builtin = await read(`/api/v1/policies/${DEFAULT_POLICY.version}`);
    assert.equal(builtin.created_by_actor, null);
    assert.equal(builtin.activated_by, null, 'activated at start-up: no one');
    for (const kind of each) {
      const who = actors[kind];
      const version = `actors-${kind}`;
      const uploaded = await call(who, 'POST', '/api/v1/policies', { ...DEFAULT_POLICY, version });
      assert.deepEqual(uploaded.created_by_actor, who.actor);
      assert.equal(uploaded.activated_by, null);
      const active = await call(who, 'POST', `/api/v1/policies/${version}/activate`, { confirm: true });
      assert.deepEqual(active.activated_by, who.actor);
      assert.deepEqual((await read(`/api/v1/policies/${version}`)).activated_by, who.actor);
    }
    // held for four eyes: the requester activated it, whoever approved
    await call(actors.client, 'PUT', '/api/v1/settings', { four_eyes: ['policies'] });
    try {
      await call(actors.person, 'POST', '/api/v1/policies', { ...DEFAULT_POLICY, version: 'actors-held' });
      const held = await ctx().inject({
        method: 'POST',
        url: '/api/v1/policies/actors-held/activate',
        headers: asPerson(desk),
        payload: { confirm: true },
      });
      assert.equal(held.statusCode, 202, held.body);
      await call(
        { headers: asPerson(second), actor: actors.person.actor },
        'POST',
        `/api/v1/changes/${held.json().id as string}/approve`,
      );
      assert.deepEqual((await read('/api/v1/policies/actors-held')).activated_by, actors.person.actor);
    } finally {
      await call(actors.client, 'PUT', '/api/v1/settings', { four_eyes: [] });
    }
    const page = (await read('/api/v1/policies?limit=100')).data as Body[];
    const byVersion = new Map(page.map((p) => [p.version, p]));
    for (const kind of each) assert.deepEqual(byVersion.get(`actors-${kind}`)?.created_by_actor, actors[kind].actor);
    assert.deepEqual(byVersion.get('actors-held')?.activated_by, actors.person.actor);
  });

  test('a key names who created it; a user who invited them; the settings who changed them and when', async () => {
    for (const kind of each) {
      const who = actors[kind];
      const key = await call(who, 'POST', '/api/v1/keys', { name: `made by ${kind}`, scopes: ['trust:read'] });
      assert.deepEqual(key.created_by, who.actor);
      assert.deepEqual((await read(`/api/v1/keys/${key.id as string}`)).created_by, who.actor);
      const invited = await call(who, 'POST', '/api/v1/users', {
        email: `invited-by-${kind}-${Date.now()}@desk.example`,
        name: `Invited by ${kind}`,
        role: 'viewer',
      });
      assert.deepEqual(invited.invited_by, who.actor);
      assert.deepEqual((await read(`/api/v1/users/${invited.id as string}`)).invited_by, who.actor);
      const before = Date.now();
      const put = await call(who, 'PUT', '/api/v1/settings', { four_eyes: ['lists'] });
      assert.deepEqual(put.updated_by, who.actor);
      const got = await read('/api/v1/settings');
      assert.deepEqual(got.updated_by, who.actor);
      assert.ok(Date.parse(got.updated_at as string) >= before - 1000);
      await call(who, 'PUT', '/api/v1/settings', { four_eyes: [] });
    }
    const keys = (await read('/api/v1/keys?limit=100')).data as Body[];
    for (const kind of each)
      assert.deepEqual(keys.find((k) => k.name === `made by ${kind}`)?.created_by, actors[kind].actor);
    const users = (await read('/api/v1/users?limit=200')).data as Body[];
    for (const kind of each)
      assert.deepEqual(users.find((u) => u.name === `Invited by ${kind}`)?.invited_by, actors[kind].actor);
  });

  test('a page of rules by several actors names each; a renamed person shows the new name, a deactivated one is still named', async () => {
    const made: Array<[string, Actor]> = [];
    for (let i = 0; i < 12; i++) {
      const kind = each[i % 3]!;
      const rule = await call(actors[kind], 'POST', '/api/v1/rules', {
        name: `page ${i}`,
        condition: 'amount > 1.0',
        action: 'review',
      });
      made.push([rule.id as string, actors[kind].actor]);
    }
    const page = (await read('/api/v1/rules?limit=200')).data as Body[];
    const byId = new Map(page.map((r) => [r.id, r]));
    for (const [id, actor] of made) {
      assert.deepEqual(byId.get(id)?.created_by_actor, actor);
      assert.deepEqual(byId.get(id)?.updated_by_actor, actor);
    }

    await call(actors.client, 'PATCH', `/api/v1/users/${desk.id}`, { name: 'Desk Renamed' });
    await call(actors.client, 'DELETE', `/api/v1/users/${desk.id}`);
    const renamed = { type: 'user', id: desk.id, name: 'Desk Renamed' };
    assert.deepEqual((await read(`/api/v1/rules/${made[0]![0]}`)).created_by_actor, renamed);
    const entries = (await read('/api/v1/lists/actor-countries/entries')).data as Body[];
    assert.deepEqual(entries.find((e) => e.value === 'IT')?.added_by_actor, renamed);
  });

  test('the command line and an id found nowhere are clients; a large page is resolved in slices', async () => {
    const ids = ['cli', 'gone-client', desk.id, actors.key.actor.id, actors.client.actor.id, null, undefined];
    const named = await resolveActors(ctx().store.db, ids);
    assert.deepEqual(named.get('cli'), { type: 'client', id: 'cli', name: 'vouch cli' });
    assert.deepEqual(named.get('gone-client'), { type: 'client', id: 'gone-client', name: 'gone-client' });
    assert.equal(named.get(desk.id)?.type, 'user');
    assert.deepEqual(named.get(actors.key.actor.id), actors.key.actor);
    assert.deepEqual(named.get(actors.client.actor.id), actors.client.actor);
    assert.equal(named.size, 5);
    const many = Array.from({ length: 450 }, (_, i) => `unknown-${i}`);
    const all = await resolveActors(ctx().store.db, [...many, desk.id]);
    assert.equal(all.size, 451);
    assert.equal(all.get(desk.id)?.type, 'user');
  });
});
