// `vouch network …` (docs/network.md, "Admin API and CLI"): peers, status and a sync now, acting on
// the store directly as `vouch clients` does. A change that can alter scores (a sync, a peer
// suspended, activated or removed) bumps the network's version in the store, as the API does, so
// every running instance's cached scores go stale at once; the name shown is the one the serving
// deployment stored at its start (its descriptor's), not this process's setting.
import { InvalidArgumentError, type Command } from 'commander';
import { loadConfig, type Config } from '../config/env.ts';
import { resolveKeyEncryption } from '../auth/kek.ts';
import type { Store } from '../store/db.ts';
import { loadIdentity } from './identity.ts';
import { announceNetworkChange, servedName } from './publication-repository.ts';
import { FLAG_KINDS, type FlagKind } from '../model/network-signal.ts';
import { PEER_ID, PeerInputError, addPeer, removePeer, toPeerRecord, updatePeer } from './peers.ts';
import { findPeer, listPeers } from './peer-repository.ts';
import { settleQueue } from './match-repository.ts';
import { syncAll } from './resolver.ts';
import { CALL_DEADLINE_MS, syncLimits } from './limits.ts';
import { networkStatus } from './status.ts';
import { networkDb } from './tables.ts';

export interface NetworkCliSupport {
  withStore: <T>(config: Config, fn: (store: Store) => Promise<T>) => Promise<T>;
  /** an input the command cannot act on (exit status 2) */
  usageError: (message: string) => Error;
}

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

function kinds(raw: string): FlagKind[] {
  const list = raw
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  const unknown = list.filter((k) => !(FLAG_KINDS as readonly string[]).includes(k));
  if (unknown.length > 0)
    throw new InvalidArgumentError(`unknown kind(s): ${unknown.join(', ')} (known: ${FLAG_KINDS.join(', ')})`);
  return [...new Set(list)] as FlagKind[];
}
function number(min: number, max: number, integer = false) {
  return (raw: string): number => {
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n)))
      throw new InvalidArgumentError(`must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
    return n;
  };
}

export function registerNetworkCommands(program: Command, { withStore, usageError }: NetworkCliSupport): void {
  const run = <T>(fn: (store: Store, config: Config) => Promise<T>) => {
    const config = loadConfig();
    return withStore(config, (store) => fn(store, config));
  };
  const peerRow = async (store: Store, id: string) => {
    const row = PEER_ID.test(id) ? await findPeer(networkDb(store.db), id) : undefined;
    if (!row) throw usageError(`no peer ${id}`);
    return row;
  };
  const network = program.command('network').description('the network of Vouch deployments: peers, status, sync');
  const peers = network.command('peers').description('peers: add, list, suspend, activate, remove');
  peers
    .command('add')
    .description('add a peer by URL and the signing key its descriptor shows (GET <url>/network/v1/descriptor)')
    .requiredOption('--name <name>', 'a name for people')
    .requiredOption('--url <url>', 'its base URL (https://, public address unless VOUCH_NETWORK_ALLOW_PRIVATE=1)')
    .requiredOption('--signing-key <key>', 'its Ed25519 signing key (base64url), pinned')
    .option('--publish <kinds>', `comma-separated kinds shown to it (default all: ${FLAG_KINDS.join(',')})`, kinds)
    .option('--weight <w>', 'its weight in the network_flags signal (default 1)', number(0, 10))
    .option('--budget <n>', 'evaluations it may ask in any 24 hours (default 2000)', number(0, 10_000_000, true))
    .action(
      async (options: {
        name: string;
        url: string;
        signingKey: string;
        publish?: FlagKind[];
        weight?: number;
        budget?: number;
      }) => {
        await run(async (store, config) => {
          const identity = await loadIdentity(networkDb(store.db), resolveKeyEncryption(config, store));
          try {
            const row = await addPeer(
              networkDb(store.db),
              identity.signingKey,
              {
                name: options.name,
                url: options.url,
                signing_key: options.signingKey,
                publish: options.publish,
                weight: options.weight,
                budget_per_day: options.budget,
              },
              { allowPrivate: config.network.allowPrivate, setting: 'VOUCH_NETWORK_ALLOW_PRIVATE' },
            );
            print(toPeerRecord(row));
          } catch (err) {
            if (err instanceof PeerInputError) throw usageError(`${err.field} ${err.message}`);
            throw err;
          }
        });
      },
    );
  peers
    .command('list')
    .description('list peers: id, status, name, url, weight, published kinds, last sync')
    .action(async () => {
      await run(async (store) => {
        process.stdout.write('id\tstatus\tname\turl\tweight\tpublish\tlast_sync_at\n');
        for (const p of (await listPeers(networkDb(store.db))).map(toPeerRecord)) {
          process.stdout.write(
            `${p.id}\t${p.status}\t${p.name}\t${p.url}\t${p.weight}\t${p.publish.join(',')}\t${p.last_sync_at ?? '-'}\n`,
          );
        }
      });
    });
  for (const [command, status, help] of [
    ['suspend', 'suspended', 'suspend a peer: its requests are refused and its flags no longer count'],
    ['activate', 'active', 'make a suspended peer active again'],
  ] as const) {
    peers
      .command(command)
      .description(help)
      .argument('<peer_id>')
      .action(async (id: string) => {
        await run(async (store) => {
          const updated = await updatePeer(networkDb(store.db), await peerRow(store, id), { status });
          await announceNetworkChange(networkDb(store.db));
          print(toPeerRecord(updated));
        });
      });
  }
  peers
    .command('remove')
    .description('remove a peer and everything pulled from it')
    .argument('<peer_id>')
    .action(async (id: string) => {
      await run(async (store) => {
        await removePeer(networkDb(store.db), (await peerRow(store, id)).id);
        await announceNetworkChange(networkDb(store.db));
        process.stdout.write(`${id} removed\n`);
      });
    });
  network
    .command('status')
    .description("this deployment's network identity, and each peer's state, last sync, matches and budget used today")
    .action(async () => {
      await run(async (store, config) => {
        const db = networkDb(store.db);
        print(
          await networkStatus(
            db,
            await loadIdentity(db, resolveKeyEncryption(config, store)),
            await servedName(db, config.network.name),
          ),
        );
      });
    });
  network
    .command('sync')
    .description(
      'sync with every active peer now (pull flags, resolve pending identifiers); exit status 1 if one failed',
    )
    .action(async () => {
      const failed = await run(async (store, config) => {
        const db = networkDb(store.db);
        const identity = await loadIdentity(db, resolveKeyEncryption(config, store));
        const results = await syncAll({
          db,
          identity,
          urlPolicy: { allowPrivate: config.network.allowPrivate, setting: 'VOUCH_NETWORK_ALLOW_PRIVATE' },
          timeoutMs: CALL_DEADLINE_MS,
          commonEntityIds: config.network.commonEntityIds,
          ...syncLimits(config.network),
        });
        await settleQueue(db);
        await announceNetworkChange(db);
        print({ peers: results });
        return results.some((r) => r.error !== undefined);
      });
      if (failed) process.exitCode = 1;
    });
}
