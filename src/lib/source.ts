// The "source" that per-address token limits count: an IPv4 address, or an IPv6 /64. One
// subscriber usually holds a whole /64, so counting single IPv6 addresses would give one caller
// 2^64 fresh budgets.
import { isIPv6 } from 'node:net';

/** The first four groups of an IPv6 address (its /64), or the address itself for IPv4. */
export function limitSource(ip: string): string {
  if (!isIPv6(ip)) return ip;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1]!;
  const [head = '', tail = ''] = ip.toLowerCase().split('%')[0]!.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = ip.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
