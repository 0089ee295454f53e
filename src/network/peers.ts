// Peers as stored and as the admin API shows them (docs/network.md, "Admin API").
import { Type } from 'typebox';
import { PATTERN_MESSAGE, StringEnum } from '../http/validation.ts';
import { newId } from '../lib/ids.ts';
import { checkDestination, type UrlPolicy } from '../webhooks/ssrf.ts';
import { ed25519PublicKey } from './identity.ts';
import { FLAG_KINDS, type FlagKind } from '../model/network-signal.ts';
import type { NetworkDb, NetworkPeersTable } from './tables.ts';
import { deletePeerData } from './peer-data-repository.ts';
import { deleteSyncState } from './peer-sync-repository.ts';
import { deletePeerBudget } from './budget-repository.ts';
import {
  deletePeerNonces,
  deletePeerRow,
  findPeer,
  insertPeer,
  peerIdBySigningKey,
  suspendPeer,
  updatePeerColumns,
} from './peer-repository.ts';

const DEFAULT_BUDGET_PER_DAY = 2_000;
const NO_CONTROL = {
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
  [PATTERN_MESSAGE]: 'must not contain control characters',
};
const SIGNING_KEY = Type.String({
  pattern: '^[A-Za-z0-9_-]{43}$',
  [PATTERN_MESSAGE]: "must be a base64url Ed25519 public key (43 characters), as the peer's descriptor shows it",
  description: "the peer's Ed25519 public key (base64url), pinned",
});
const Publish = Type.Array(StringEnum(FLAG_KINDS), {
  uniqueItems: true,
  maxItems: FLAG_KINDS.length,
  description: 'which kinds this deployment shows that peer',
});
const Weight = Type.Number({
  minimum: 0,
  maximum: 10,
  description: "the peer's weight in the network_flags signal (default 1)",
});
const Budget = Type.Integer({
  minimum: 0,
  maximum: 10_000_000,
  description: 'evaluations the peer may ask for in any 24 hours (a rolling window; default 2000)',
});

export const PeerRecord = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    url: Type.String(),
    signing_key: Type.String(),
    status: StringEnum(['active', 'suspended'] as const),
    weight: Type.Number(),
    publish: Type.Array(Type.String()),
    last_sync_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    budget_per_day: Type.Integer(),
  },
  { $id: 'NetworkPeer' },
);

export const CreatePeerBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, ...NO_CONTROL }),
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    signing_key: SIGNING_KEY,
    publish: Type.Optional(Publish),
    weight: Type.Optional(Weight),
    budget_per_day: Type.Optional(Budget),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'marketplace-b',
        url: 'https://vouch.marketplace-b.example',
        signing_key: 'O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik',
        publish: [...FLAG_KINDS],
        weight: 1,
        budget_per_day: 2_000,
      },
    ],
  },
);

export const UpdatePeerBody = Type.Object(
  {
    status: Type.Optional(StringEnum(['active', 'suspended'] as const)),
    weight: Type.Optional(Weight),
    publish: Type.Optional(Publish),
    budget_per_day: Type.Optional(Budget),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ status: 'suspended' }] },
);

export const PEER_ID = /^peer_[0-9A-HJKMNP-TV-Z]{26}$/;

export const publishedKinds = (row: Pick<NetworkPeersTable, 'publish'>): FlagKind[] =>
  row.publish.split(' ').filter((k): k is FlagKind => (FLAG_KINDS as readonly string[]).includes(k));

export function toPeerRecord(row: NetworkPeersTable) {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    signing_key: row.signing_key,
    status: row.status === 'suspended' ? ('suspended' as const) : ('active' as const),
    weight: Number(row.weight),
    publish: publishedKinds(row),
    last_sync_at: row.last_sync_at === null ? null : new Date(Number(row.last_sync_at)).toISOString(),
    budget_per_day: Number(row.budget_per_day),
  };
}

/**
 * Removes a peer and everything this deployment holds about it (pulled flags, resolutions,
 * matches). The peer is suspended first — its flags stop counting and its requests are refused at
 * once — then its rows go a chunk at a time in short transactions (peer-data-repository.ts), then the peer. A
 * removal cut short leaves the peer suspended, and removing it again finishes.
 */
export async function removePeer(db: NetworkDb, id: string): Promise<void> {
  await suspendPeer(db, id);
  await deletePeerData(db, id);
  await db.transaction().execute(async (trx) => {
    await deletePeerNonces(trx, id);
    await deletePeerBudget(trx, id);
    await deleteSyncState(trx, id);
    await deletePeerRow(trx, id);
  });
  // A sync that was under way with the peer may have written after its chunks went.
  await deletePeerData(db, id);
}

/** A peer that cannot be added as given: `field` names the input; `conflict` when its key is already a peer. */
export class PeerInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
    readonly conflict = false,
  ) {
    super(message);
  }
}

export interface NewPeer {
  name: string;
  url: string;
  signing_key: string;
  publish?: FlagKind[] | undefined;
  weight?: number | undefined;
  budget_per_day?: number | undefined;
}

/** Adds a peer after the URL check (as for webhooks) and the key checks; nothing is sent to it here. */
export async function addPeer(
  db: NetworkDb,
  ownKey: string,
  input: NewPeer,
  urlPolicy: UrlPolicy,
): Promise<NetworkPeersTable> {
  const check = await checkDestination(input.url, urlPolicy);
  if (!check.ok) throw new PeerInputError('url', check.message);
  if (!ed25519PublicKey(input.signing_key))
    throw new PeerInputError('signing_key', 'must be an Ed25519 public key (base64url)');
  if (input.signing_key === ownKey)
    throw new PeerInputError('signing_key', "must be another deployment's key, not this one's");
  const duplicate = () => new PeerInputError('signing_key', 'a peer with this signing key already exists', true);
  if (await peerIdBySigningKey(db, input.signing_key)) throw duplicate();
  const row: NetworkPeersTable = {
    id: newId('peer'),
    name: input.name,
    url: check.url.href.replace(/\/+$/, ''),
    signing_key: input.signing_key,
    oprf_public: null,
    status: 'active',
    weight: input.weight ?? 1,
    publish: (input.publish ?? [...FLAG_KINDS]).join(' '),
    publish_epoch: 0,
    budget_per_day: input.budget_per_day ?? DEFAULT_BUDGET_PER_DAY,
    flags_since: '',
    flags_epoch: '',
    flags_cursor: '',
    last_sync_at: null,
    last_error: null,
    created_at: Date.now(),
  };
  try {
    await insertPeer(db, row);
  } catch {
    // Two admins adding the same key at once: the unique key refuses the second.
    throw duplicate();
  }
  return row;
}

export interface PeerChanges {
  status?: 'active' | 'suspended' | undefined;
  weight?: number | undefined;
  publish?: FlagKind[] | undefined;
  budget_per_day?: number | undefined;
}

/** Applies an admin's changes; a change of the published kinds makes the peer's next pull start over. */
export async function updatePeer(
  db: NetworkDb,
  row: NetworkPeersTable,
  { status, weight, publish, budget_per_day: budget }: PeerChanges,
): Promise<NetworkPeersTable> {
  const nextPublish = publish === undefined ? row.publish : publish.join(' ');
  const changes = {
    ...(status !== undefined ? { status } : {}),
    ...(weight !== undefined ? { weight } : {}),
    ...(budget !== undefined ? { budget_per_day: budget } : {}),
    ...(nextPublish !== row.publish ? { publish: nextPublish, publish_epoch: Number(row.publish_epoch) + 1 } : {}),
  };
  if (Object.keys(changes).length > 0) await updatePeerColumns(db, row.id, changes);
  return (await findPeer(db, row.id)) ?? row;
}
