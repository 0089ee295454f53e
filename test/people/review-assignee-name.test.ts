// docs/api.md, "Reviews": a review names its assignee by name as well as by principal id
// (`assignee_name`): the user's name for a person, the client's name for a machine client, and
// null while no one holds it. The console's "claimed by" shows it.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend, bearer } from '../helpers/app.ts';
import { asPerson, person, type Person } from '../helpers/people.ts';
import { REVIEWS, desk, seedReviews } from '../reviews/support.ts';

interface Review {
  id: string;
  status: string;
  assignee: string | null;
  assignee_name: string | null;
}

describeEachBackend('review assignee names', (ctx) => {
  let machine: { id: string; token: string };
  let analyst: Person;
  let analystName = '';
  let admin = '';

  before(async () => {
    admin = await ctx().token();
    machine = await desk(ctx(), 'admin');
    analyst = await person(ctx(), 'analyst', admin);
    const user = await ctx().inject({ method: 'GET', url: `/api/v1/users/${analyst.id}`, headers: bearer(admin) });
    analystName = (user.json() as { name: string }).name;
  });

  const post = (url: string, headers: Record<string, string>, payload?: object) =>
    ctx().inject({ method: 'POST', url, headers, ...(payload ? { payload } : {}) });
  const read = async (id: string): Promise<Review> => {
    const res = await ctx().inject({ method: 'GET', url: `${REVIEWS}/${id}`, headers: bearer(admin) });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Review;
  };

  test("a person's claim and verdict name the person; a client's name the client; an open review names no one", async () => {
    const seeded = await seedReviews(ctx().store.db, [
      { owner: machine.id },
      { owner: machine.id },
      { owner: machine.id },
    ]);
    const [mine, theirs, open] = seeded.map((r) => r.review!.id) as [string, string, string];

    const claimed = await post(`${REVIEWS}/${mine}/claim`, asPerson(analyst));
    assert.equal(claimed.statusCode, 200, claimed.body);
    assert.equal(claimed.json().assignee, analyst.id);
    assert.equal(claimed.json().assignee_name, analystName);

    const byClient = await post(`${REVIEWS}/${theirs}/claim`, bearer(machine.token));
    assert.equal(byClient.statusCode, 200, byClient.body);
    assert.equal(byClient.json().assignee, machine.id);
    assert.equal(byClient.json().assignee_name, 'test', "the client's name (test/helpers/app.ts names clients so)");

    const none = await read(open);
    assert.equal(none.status, 'open');
    assert.equal(none.assignee_name, null);

    // the listing carries the same names
    const listed = await ctx().inject({ method: 'GET', url: `${REVIEWS}?limit=100`, headers: bearer(admin) });
    const byId = new Map((listed.json().data as Review[]).map((r) => [r.id, r]));
    assert.equal(byId.get(mine)?.assignee_name, analystName);
    assert.equal(byId.get(theirs)?.assignee_name, 'test');
    assert.equal(byId.get(open)?.assignee_name, null);

    // a verdict keeps the resolver's name; releasing a claim drops it
    const resolved = await post(`${REVIEWS}/${mine}/resolve`, asPerson(analyst), { resolution: 'approve' });
    assert.equal(resolved.statusCode, 200, resolved.body);
    assert.equal(resolved.json().assignee_name, analystName);
    assert.equal((await read(mine)).assignee_name, analystName);
    const released = await post(`${REVIEWS}/${theirs}/release`, bearer(machine.token));
    assert.equal(released.statusCode, 200, released.body);
    assert.equal(released.json().assignee_name, null);
  });
});
