// Revocations (a client or key deactivated, a key rotated) must reach every process at once:
// this one, the other workers and instances, and a CLI run against the same store. Each is a
// row in `revocations`, written in the same transaction as the change; processes learn of new
// rows by SQLite's data_version (checked before each authenticated request, ~1 µs) or by a
// PostgreSQL NOTIFY sent on commit, and then read the rows they have not seen.
import pg from 'pg';
import type { Redis } from 'ioredis';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { Store } from '../store/db.ts';

export type RevocationKind = 'client' | 'key';
export type RevocationListener = (kind: RevocationKind, subject: string) => void;

const CHANNEL = 'vouch_revocations';

export class RevocationFeed {
  private readonly listeners: RevocationListener[] = [];
  private lastSeq = 0;
  private listener: pg.Client | undefined;
  private stopped = false;
  private publisher: Redis | undefined;
  private catchingUp: Promise<void> | undefined;

  constructor(private readonly store: Store) {}

  on(listener: RevocationListener): void {
    this.listeners.push(listener);
  }

  async start(): Promise<void> {
    const row = await this.store.db.selectFrom('revocations').select(sql<number>`coalesce(max(seq), 0)`.as('seq')).executeTakeFirst();
    this.lastSeq = Number(row?.seq ?? 0);
    this.store.changes.poll();
    if (this.store.pgConfig) await this.listen();
  }

  /** With Redis, revocations also travel over pub/sub: the fastest path between instances. */
  async attachRedis(publisher: Redis, subscriber: Redis): Promise<void> {
    this.publisher = publisher;
    subscriber.on('message', (channel: string) => {
      if (channel === CHANNEL) void this.catchUp().catch(() => {});
    });
    await subscriber.subscribe(CHANNEL).catch(() => {});
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.listener?.end().catch(() => {});
  }

  /** Writes the revocation inside the caller's transaction, so it exists exactly when the change does. */
  async record(trx: Transaction<Database> | Kysely<Database>, kind: RevocationKind, subject: string): Promise<void> {
    await trx.insertInto('revocations').values({ kind, subject, created_at: Date.now() }).execute();
    if (this.store.dialect === 'postgres') await sql`select pg_notify(${CHANNEL}, '')`.execute(trx);
  }

  /** After commit: this process applies the change at once, before the response leaves. */
  async announce(kind: RevocationKind, subject: string): Promise<void> {
    this.emit(kind, subject);
    if (this.publisher?.status === 'ready') await this.publisher.publish(CHANNEL, '').catch(() => 0);
    await this.catchUp();
  }

  /** Cheap check before each authenticated request; reads new rows only when another process wrote. */
  poll(): Promise<void> | undefined {
    return this.store.changes.poll() ? this.catchUp() : undefined;
  }

  private emit(kind: RevocationKind, subject: string): void {
    for (const listener of this.listeners) listener(kind, subject);
  }

  catchUp(): Promise<void> {
    this.catchingUp ??= (async () => {
      try {
        const rows = await this.store.db.selectFrom('revocations').selectAll().where('seq', '>', this.lastSeq).orderBy('seq').execute();
        for (const row of rows) {
          this.lastSeq = Math.max(this.lastSeq, Number(row.seq));
          this.emit(row.kind as RevocationKind, row.subject);
        }
      } finally {
        this.catchingUp = undefined;
      }
    })();
    return this.catchingUp;
  }

  private async listen(): Promise<void> {
    if (this.stopped || !this.store.pgConfig) return;
    const client = new pg.Client(this.store.pgConfig);
    const retry = () => {
      if (this.listener !== client) return;
      this.listener = undefined;
      client.end().catch(() => {});
      if (!this.stopped) setTimeout(() => void this.listen(), 500).unref();
    };
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', () => void this.catchUp().catch(() => {}));
    this.listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      // Anything revoked while we were not listening.
      await this.catchUp();
    } catch {
      retry();
    }
  }
}
