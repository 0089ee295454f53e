// A peer that speaks the protocol over a real HTTP server on 127.0.0.1 (docs/network.md,
// "Protocol") and misbehaves as a test tells it to: pages with more entries than asked, oversized
// or deeply nested answers, answers dripped a byte at a time, 429s, a rotating OPRF key. Its
// answers are signed as a deployment signs them, so only the syncing side's limits stand between it
// and the store under test.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signText, type NetworkIdentity } from '../../src/network/identity.ts';
import {
  b64,
  evaluateBlinded,
  fromB64,
  generateOprfKey,
  ownEntries,
  prfInput,
  sealLabel,
  type Label,
} from '../../src/network/oprf.ts';
import { standInPeer } from './support.ts';

export interface Answer {
  status?: number;
  body?: unknown;
  /** raw text instead of JSON.stringify(body) */
  text?: string;
  headers?: Record<string, string>;
  /** sends the (signed) text a byte every `dripMs`, never faster */
  dripMs?: number;
  /** waits this long before answering */
  delayMs?: number;
}

export type Handler = (query: URLSearchParams, body: unknown) => Answer | undefined;

export interface HostilePeer {
  url: string;
  identity: NetworkIdentity;
  /** requests served, by endpoint (descriptor, flags, evaluate) */
  calls: Record<string, number>;
  /** the order things happened at this peer, for tests across peers */
  events: string[];
  /** overrides of the honest answers, by endpoint */
  on: Partial<Record<'descriptor' | 'flags' | 'evaluate', Handler>>;
  /** its flag set, as the honest answer serves it: everything on one page up to `limit` */
  entries: Array<{ tag: string; sealed: string } | { tag: string; withdrawn: true }>;
  rotateOprfKey(): void;
  /** a sealed entry of an identifier under the peer's current key */
  flag(type: string, hash: string, label?: Label): { tag: string; sealed: string };
  close(): Promise<void>;
}

const digest = (text: string) => createHash('sha256').update(text).digest('base64url');

/** An entry of the right shape that opens for nobody. */
export const junkEntry = (sealedBytes = 12 + 60 + 16) => ({
  tag: b64(randomBytes(32)),
  sealed: randomBytes(sealedBytes).toString('base64url'),
});

export async function hostilePeer(events: string[] = [], name = 'M'): Promise<HostilePeer> {
  const identity = standInPeer();
  const sockets = new Set<import('node:net').Socket>();
  const peer: HostilePeer = {
    url: '',
    identity,
    calls: {},
    events,
    on: {},
    entries: [],
    rotateOprfKey() {
      identity.oprf = generateOprfKey();
      identity.oprfPublicKey = b64(identity.oprf.publicKey);
    },
    flag(type, hash, label = { kinds: { fraud_report: 1 }, latest_month: new Date().toISOString().slice(0, 7) }) {
      const [own] = ownEntries(identity.oprf.secretKey, [prfInput(type, hash)]);
      return { tag: own!.tag, sealed: sealLabel(label, Buffer.from(own!.labelKey, 'base64url'), own!.tag) };
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const honest = (endpoint: string, query: URLSearchParams, body: unknown): Answer => {
    if (endpoint === 'descriptor')
      return {
        body: {
          name,
          signing_key: identity.signingKey,
          oprf_public_key: identity.oprfPublicKey,
          endpoints: {},
          common_entity_ids: false,
        },
      };
    if (endpoint === 'flags')
      return {
        body: {
          epoch: '1.0',
          entries: peer.entries.slice(0, Number(query.get('limit') ?? 1000)),
          next_cursor: null,
          since: '1',
        },
      };
    const elements = (body as { elements: string[] }).elements.map((e) => fromB64(e, 32)!);
    const { evaluated, proof } = evaluateBlinded(identity.oprf, elements);
    return { body: { evaluated: evaluated.map(b64), proof: b64(proof) } };
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://peer');
      const endpoint = url.pathname.replace('/network/v1/', '');
      peer.calls[endpoint] = (peer.calls[endpoint] ?? 0) + 1;
      events.push(`${name}:${endpoint}`);
      const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown) : undefined;
      const handler = peer.on[endpoint as 'flags'];
      const answer = handler?.(url.searchParams, body) ?? honest(endpoint, url.searchParams, body);
      const status = answer.status ?? 200;
      const text = answer.text ?? JSON.stringify(answer.body ?? {});
      const nonce = String(req.headers['vouch-nonce'] ?? '');
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = signText(
        identity,
        ['vouch-network/v1 response', String(status), nonce, timestamp, digest(text)].join('\n'),
      );
      const send = () => {
        res.writeHead(status, {
          'content-type': 'application/json',
          'vouch-timestamp': timestamp,
          'vouch-signature': signature,
          ...answer.headers,
        });
        if (!answer.dripMs) return res.end(text);
        let i = 0;
        const timer = setInterval(() => {
          if (res.destroyed || i >= text.length) {
            clearInterval(timer);
            return res.end();
          }
          res.write(text[i++]);
        }, answer.dripMs);
        res.on('close', () => clearInterval(timer));
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      events.push(`${name}:closed`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  peer.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return peer;
}
