// The change feed: named changes that must reach every process at once — this one, the other
// workers and instances, and a CLI run against the same store. Each change is a row of the feed's
// table (`revocations`, its first use), written in the same transaction as the change; processes
// learn of new rows before each authenticated request — by SQLite's change counter (changes.ts,
// ~1 µs), or on PostgreSQL by one small query shared by the requests that arrive together — and
// then read the rows they have not seen. A PostgreSQL NOTIFY and, with Redis, a pub/sub message
// bring those rows in ahead of time, so that check rarely finds anything; on their own they can
// arrive after the next request (tens of ms under load), which docs/api.md does not allow.
import type { Redis } from 'ioredis';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { BackgroundService } from '../lib/background.ts';
import type { Database } from './schema.ts';
import type { Store } from './db.ts';
import { listen, notify, type Listening } from './locks.ts';
import { lateCommitWindow } from './sequences.ts';

/**
 * The kinds of change on the feed, each written by one feature and read by every process:
 * `client` and `key`, a credential revoked (auth/revocation.ts); `policy`, an activation or shadow
 * change (policies/live.ts); `rules`, a rule or list of the environment named by the subject
 * (rules/live.ts); `entity`, an erasure (subject: the erased id's digest), after which every
 * process drops what it cached from the entity.
 */
export type ChangeKind = 'client' | 'key' | 'policy' | 'entity' | 'rules';
export type ChangeListener = (subject: string, kind: ChangeKind) => void;

/** The channel of NOTIFY and of Redis pub/sub; named for the feed's first use, as every version listens on it. */
const CHANNEL = 'vouch_revocations';
const noop = () => {};

export class ChangeFeed implements BackgroundService {
  readonly name = 'change feed';
  private readonly listeners: Array<{ kinds: ReadonlySet<ChangeKind>; listener: ChangeListener }> = [];
  private lastSeq = 0;
  /** seqs in (lastSeq - lookback, lastSeq] already applied */
  private readonly applied = new Set<number>();
  /** a catch-up was asked for while one ran: it may have read before the newest commit */
  private again = false;
  /** the last catch-up failed: the next poll tries again */
  private failed = false;
  /** the store's change generation (changes.ts) when the last catch-up began */
  private generation = 0;
  private listening: Listening | undefined;
  private stopped = false;
  private catchingUp: Promise<void> | undefined;
  /** PostgreSQL: the check in flight, and the one queued behind it */
  private checking: Promise<void> | undefined;
  private queuedCheck: Promise<void> | undefined;

  /** `redis`: with Redis, changes also travel over pub/sub, the fastest path between instances. */
  constructor(
    private readonly store: Store,
    private readonly redis?: { publisher: Redis; subscriber: Redis },
  ) {}

  /** Calls `listener` with each change of the kinds named, from this process or any other, once each. */
  on(kinds: ChangeKind | readonly ChangeKind[], listener: ChangeListener): void {
    this.listeners.push({ kinds: new Set(typeof kinds === 'string' ? [kinds] : kinds), listener });
  }

  /**
   * Takes the feed's position: a change committed after it reaches the listeners, one committed
   * before does not — so read the state the listeners keep after this resolves.
   */
  async start(): Promise<void> {
    // The generation first: a commit after it (even one the reads below already see) triggers a
    // catch-up on the next poll; a commit before it is in the reads.
    this.store.changes.poll();
    this.generation = this.store.changes.generation;
    const row = await this.store.db
      .selectFrom('revocations')
      .select(sql<number>`coalesce(max(seq), 0)`.as('seq'))
      .executeTakeFirst();
    this.lastSeq = Number(row?.seq ?? 0);
    if (this.lookback > 0) {
      // Already reflected in what this process loads at start; a lower seq committed later is not.
      const recent = await this.store.db
        .selectFrom('revocations')
        .select('seq')
        .where('seq', '>', this.lastSeq - this.lookback)
        .where('seq', '<=', this.lastSeq)
        .execute();
      for (const r of recent) this.applied.add(Number(r.seq));
    }
    // Anything changed while nobody listened is read at each (re)connect.
    if (!this.stopped) this.listening = await listen(this.store, CHANNEL, () => this.catchUp());
    // stop() may have run while the first connection was being made.
    if (this.stopped) await this.listening?.stop();
    if (this.redis) await this.subscribe(this.redis.subscriber);
  }

  private async subscribe(subscriber: Redis): Promise<void> {
    subscriber.on('message', (channel: string) => {
      if (channel === CHANNEL) void this.catchUp().catch(() => {});
    });
    // ioredis re-subscribes after a reconnect only to channels it once subscribed to: when Redis
    // was down at start, subscribe whenever the connection becomes ready. Messages missed while
    // it was down are covered by the catch-up.
    subscriber.on('ready', () => {
      void subscriber
        .subscribe(CHANNEL)
        .then(() => this.catchUp())
        .catch(() => {});
    });
    await subscriber.subscribe(CHANNEL).catch(() => {});
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.listening?.stop();
  }

  /** Writes the change inside the caller's transaction, so it exists exactly when the change does. */
  record(trx: Transaction<Database> | Kysely<Database>, kind: ChangeKind, subject: string): Promise<void> {
    return recordChange(trx, kind, subject, this.store);
  }

  /** After commit: this process applies the change at once, before the response leaves. */
  async announce(kind: ChangeKind, subject: string): Promise<void> {
    this.emit(kind, subject);
    const publisher = this.redis?.publisher;
    if (publisher?.status === 'ready') await publisher.publish(CHANNEL, '').catch(() => 0);
    await this.catchUp();
  }

  /**
   * Before each authenticated request: applies every change committed before the request
   * arrived. SQLite: reads new rows only when the file changed (another process committed, or
   * this one wrote) or a failed catch-up is owed. A store without that signal (PostgreSQL) is
   * asked (see check).
   */
  poll(): Promise<void> | undefined {
    if (!this.store.changes.supported) return this.check();
    // The generation, not poll()'s result: poll() reports a change once, to whichever caller
    // looks first, and the score cache looks too.
    const changes = this.store.changes;
    changes.poll();
    if (changes.generation !== this.generation || this.failed) {
      this.generation = changes.generation;
      return this.catchUp();
    }
    return this.catchingUp;
  }

  /**
   * PostgreSQL has no cheap local signal of another instance's commit, so each request asks: how
   * many changes lie above the look-back floor, and the highest seq. When that matches what
   * this process has applied nothing is new; otherwise it catches up first. A request waits for
   * a check sent after it arrived — the one in flight if none is, else the next — so requests
   * arriving together share one query.
   */
  private check(): Promise<void> {
    if (!this.checking) return (this.checking = this.runCheck());
    this.queuedCheck ??= this.checking.then(noop, noop).then(() => {
      this.queuedCheck = undefined;
      return (this.checking = this.runCheck());
    });
    return this.queuedCheck;
  }

  private async runCheck(): Promise<void> {
    try {
      const floor = Math.max(0, this.lastSeq - this.lookback);
      const row = await this.store.db
        .selectFrom('revocations')
        .select([sql<number>`count(*)`.as('n'), sql<number>`coalesce(max(seq), 0)`.as('top')])
        .where('seq', '>', floor)
        .executeTakeFirst();
      if (this.failed || Number(row?.n ?? 0) !== this.applied.size || Number(row?.top ?? 0) !== this.lastSeq)
        await this.catchUp();
    } finally {
      this.checking = undefined;
    }
  }

  /** Each catch-up looks again this far below the highest seq seen, for late commits (sequences.ts). */
  private get lookback(): number {
    return lateCommitWindow(this.store);
  }

  private emit(kind: ChangeKind, subject: string): void {
    for (const { kinds, listener } of this.listeners) if (kinds.has(kind)) listener(subject, kind);
  }

  /** Applies every change not applied yet. Resolves once rows committed before the call are applied. */
  catchUp(): Promise<void> {
    if (this.catchingUp) {
      // The read under way may have started before the commit that prompted this call.
      this.again = true;
      return this.catchingUp;
    }
    this.catchingUp = (async () => {
      try {
        do {
          this.again = false;
          await this.readNew();
        } while (this.again);
        this.failed = false;
      } catch (err) {
        this.failed = true;
        throw err;
      } finally {
        this.catchingUp = undefined;
      }
    })();
    return this.catchingUp;
  }

  private async readNew(): Promise<void> {
    const floor = Math.max(0, this.lastSeq - this.lookback);
    const rows = await this.store.db
      .selectFrom('revocations')
      .selectAll()
      .where('seq', '>', floor)
      .orderBy('seq')
      .execute();
    for (const row of rows) {
      const seq = Number(row.seq);
      if (this.applied.has(seq) || (this.lookback === 0 && seq <= this.lastSeq)) continue;
      if (this.lookback > 0) this.applied.add(seq);
      this.lastSeq = Math.max(this.lastSeq, seq);
      this.emit(row.kind as ChangeKind, row.subject);
    }
    if (this.lookback > 0) {
      for (const seq of this.applied) if (seq <= this.lastSeq - this.lookback) this.applied.delete(seq);
    }
  }
}

/**
 * Writes a change inside the caller's transaction, for a caller without the feed object (a
 * repository, a CLI): every process reads it before its next authenticated request. With `store`,
 * a PostgreSQL NOTIFY also wakes the listening processes at commit.
 */
export async function recordChange(
  trx: Transaction<Database> | Kysely<Database>,
  kind: ChangeKind,
  subject: string,
  store?: Pick<Store, 'dialect'>,
): Promise<void> {
  await trx.insertInto('revocations').values({ kind, subject, created_at: Date.now() }).execute();
  if (store) await notify(store, trx, CHANNEL);
}
