// Revocations (a client deactivated, a key deactivated or rotated) must be refused on every
// process from its next request (docs/api.md, "Authentication"). The change feed carries them
// (store/change-feed.ts: a `client` or `key` row written in the change's transaction, read
// before each authenticated request); this is what a process does with them: a deactivated
// client's tokens are refused from then on, a key's cached verification is dropped.
import type { Kysely } from 'kysely';
import type { BackgroundService } from '../lib/background.ts';
import type { Database } from '../store/schema.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import { deactivatedClientIds } from './clients.ts';

export class RevokedCredentials implements BackgroundService {
  readonly name = 'revoked credentials';

  constructor(
    feed: Pick<ChangeFeed, 'on'>,
    private readonly db: Kysely<Database>,
    private readonly tokens: { markClientDeactivated(clientId: string): void },
    keys: { forget(keyId: string): void },
  ) {
    feed.on('client', (clientId) => tokens.markClientDeactivated(clientId));
    feed.on('key', (keyId) => keys.forget(keyId));
  }

  /** After the feed has started: a client deactivated since reaches `tokens` through the feed. */
  async start(): Promise<void> {
    for (const id of await deactivatedClientIds(this.db)) this.tokens.markClientDeactivated(id);
  }

  stop(): void {}
}
