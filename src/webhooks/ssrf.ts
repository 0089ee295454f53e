// Where a webhook may point (CONTRACT §10): https:// only, no credentials, and no private,
// loopback, link-local or otherwise non-public address — checked on the resolved addresses, at
// creation and again at every delivery (which connects to the address checked, so a DNS answer
// that changes in between cannot redirect it). VOUCH_WEBHOOK_ALLOW_PRIVATE=1 lifts the address
// rule and allows http://.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) blocked.addSubnet(net, prefix, 'ipv6');
// ::ffff:0:0/96 is not listed: BlockList would then match every IPv4 address. Mapped addresses
// are unwrapped below instead.

/** Whether an address may receive webhooks: a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  // IPv4-mapped IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it carries.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return !blocked.check(mapped[1]!, 'ipv4');
  return !blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export interface UrlPolicy {
  allowPrivate: boolean;
  /** name resolution; replaceable in tests */
  resolve?: (host: string) => Promise<Array<{ address: string; family: number }>>;
}

export type UrlCheck = { ok: true; url: URL; address: string; family: number } | { ok: false; message: string };

const defaultResolve = (host: string) => lookup(host, { all: true, verbatim: true });

/** The URL's syntax (for creation: answered as validation_failed) — no name resolution. */
export function checkUrlSyntax(raw: string, policy: UrlPolicy): { ok: true; url: URL } | { ok: false; message: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, message: 'must be an absolute URL' };
  }
  if (url.protocol !== 'https:' && !(policy.allowPrivate && url.protocol === 'http:')) {
    return { ok: false, message: policy.allowPrivate ? 'must be an https:// or http:// URL' : 'must be an https:// URL' };
  }
  if (url.username !== '' || url.password !== '') return { ok: false, message: 'must not contain credentials' };
  if (url.hostname === '') return { ok: false, message: 'must name a host' };
  return { ok: true, url };
}

/** Syntax, then every address the host resolves to; the first allowed one is what to connect to. */
export async function checkDestination(raw: string, policy: UrlPolicy): Promise<UrlCheck> {
  const syntax = checkUrlSyntax(raw, policy);
  if (!syntax.ok) return syntax;
  const host = syntax.url.hostname.replace(/^\[|\]$/g, '');
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await (policy.resolve ?? defaultResolve)(host);
    } catch {
      return { ok: false, message: 'does not resolve to an address' };
    }
  }
  if (addresses.length === 0) return { ok: false, message: 'does not resolve to an address' };
  // Every address must be public: a name with one private answer could be made to use it.
  if (!policy.allowPrivate && addresses.some((a) => !isPublicAddress(a.address))) {
    return { ok: false, message: 'must not point to a private, loopback or link-local address' };
  }
  return { ok: true, url: syntax.url, address: addresses[0]!.address, family: addresses[0]!.family };
}
