// Where a webhook may point: https:// only, no credentials, and no private, loopback, link-local or
// otherwise non-public address — checked on the resolved addresses, at creation and again at every
// delivery (which connects to the address checked, so a DNS answer that changes in between cannot
// redirect it).
// VOUCH_WEBHOOK_ALLOW_PRIVATE=1 lifts the address rule and allows http://.
import { BlockList, isIP } from 'node:net';
import { resolveDestination } from './resolve.ts';

const blocked4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked4.addSubnet(net, prefix, 'ipv4');
// Inside 2000::/3 (the only global unicast space; everything outside it — ::/8 with the mapped,
// translated and compatible forms, fc00::/7 unique-local, fe80::/10, ff00::/8 — is refused unless
// it embeds a public IPv4 address as below): Teredo and ORCHID (2001::/23), documentation, and
// 6to4 (2002::/16, deprecated by RFC 7526, whose relays would carry the packet to any IPv4 address
// it embeds, private ones included).
const blocked6 = new BlockList();
for (const [net, prefix] of [
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['3fff::', 20],
] as const)
  blocked6.addSubnet(net, prefix, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (a trailing dotted quad and a zone allowed), or undefined. */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.replace(/%.*$/, '').toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const b = quad.slice(1).map(Number);
    if (b.some((x) => x > 255)) return undefined;
    text = `${text.slice(0, quad.index)}${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string) =>
    part === '' ? [] : part.split(':').map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const fill = 8 - head.length - tail.length;
  if ((halves.length === 2 ? fill < 1 : fill !== 0) || [...head, ...tail].some(Number.isNaN)) return undefined;
  return [...head, ...new Array<number>(fill).fill(0), ...tail];
}

const embeddedIpv4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
const zeros = (groups: number[], from: number, to: number) => groups.slice(from, to).every((g) => g === 0);

/**
 * Whether an address may receive webhooks: a public unicast address. An IPv6 form that carries an
 * IPv4 address for translation — IPv4-mapped ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d and
 * the NAT64 well-known prefix 64:ff9b::/96 — is judged as that IPv4 address (NAT64 is how
 * IPv6-only networks reach public IPv4 hosts); the deprecated IPv4-compatible ::a.b.c.d and the
 * local-use NAT64 prefix 64:ff9b:1::/48 (whose translation is the operator's own) are refused.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blocked4.check(address, 'ipv4');
  if (family !== 6) return false;
  const g = ipv6Groups(address);
  if (!g) return false;
  if (zeros(g, 0, 5) && g[5] === 0xffff) return isPublicAddress(embeddedIpv4(g[6]!, g[7]!));
  if (zeros(g, 0, 4) && g[4] === 0xffff && g[5] === 0) return isPublicAddress(embeddedIpv4(g[6]!, g[7]!));
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(g, 2, 6)) return isPublicAddress(embeddedIpv4(g[6]!, g[7]!));
  if ((g[0]! & 0xe000) !== 0x2000) return false;
  return !blocked6.check(g.map((x) => x.toString(16)).join(':'), 'ipv6');
}

export interface UrlPolicy {
  allowPrivate: boolean;
  /** the variable that lifts the address rule, named in refusals; unset: both are named */
  setting?: 'VOUCH_WEBHOOK_ALLOW_PRIVATE' | 'VOUCH_NETWORK_ALLOW_PRIVATE';

  /** name resolution; replaceable in tests */
  resolve?: (host: string) => Promise<Array<{ address: string; family: number }>>;
}

/** Why a destination is refused: its syntax, a name that does not resolve, or a non-public address. */
type RefusalReason = 'syntax' | 'unresolved' | 'private';
export type UrlCheck =
  { ok: true; url: URL; address: string; family: number } | { ok: false; reason: RefusalReason; message: string };

/** How a refusal that a setting would lift says so: a first-time user's loopback URL must not be a dead end. */
function liftedBy(policy: UrlPolicy): string {
  return policy.setting !== undefined
    ? `${policy.setting}=1`
    : 'VOUCH_WEBHOOK_ALLOW_PRIVATE=1 (webhooks) or VOUCH_NETWORK_ALLOW_PRIVATE=1 (network peers)';
}

/** The URL's syntax (for creation: answered as validation_failed) — no name resolution. */
function checkUrlSyntax(
  raw: string,
  policy: UrlPolicy,
): { ok: true; url: URL } | { ok: false; reason: 'syntax'; message: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'syntax', message: 'must be an absolute URL' };
  }
  if (url.protocol !== 'https:' && !(policy.allowPrivate && url.protocol === 'http:')) {
    return {
      ok: false,
      reason: 'syntax',
      message: policy.allowPrivate
        ? 'must be an https:// or http:// URL'
        : `must be an https:// URL (http:// is allowed with ${liftedBy(policy)})`,
    };
  }
  if (url.username !== '' || url.password !== '')
    return { ok: false, reason: 'syntax', message: 'must not contain credentials' };
  if (url.hostname === '') return { ok: false, reason: 'syntax', message: 'must name a host' };
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
      addresses = await (policy.resolve ?? ((name: string) => resolveDestination(name, policy.allowPrivate)))(host);
    } catch {
      return { ok: false, reason: 'unresolved', message: 'does not resolve to an address' };
    }
  }
  if (addresses.length === 0) return { ok: false, reason: 'unresolved', message: 'does not resolve to an address' };
  // Every address must be public: a name with one private answer could be made to use it.
  if (!policy.allowPrivate && addresses.some((a) => !isPublicAddress(a.address))) {
    return {
      ok: false,
      reason: 'private',
      message: `must not point to a private, loopback or link-local address (allowed with ${liftedBy(policy)})`,
    };
  }
  return { ok: true, url: syntax.url, address: addresses[0]!.address, family: addresses[0]!.family };
}
