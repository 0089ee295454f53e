// Name resolution for webhook destinations, off the libuv thread pool. getaddrinfo (dns.lookup)
// blocks one of the pool's four threads until the name's servers answer, so a tenant whose names
// never resolve would stall every other tenant's lookups (and the pool's file and crypto work)
// however short the delivery timeout. c-ares (dns.Resolver) asks the system's name servers
// asynchronously, with a bounded wait of its own.
import { lookup, Resolver } from 'node:dns/promises';

export type Address = { address: string; family: number };

/** The resolver every destination check uses; tests point it at a server of their own. */
export const destinationResolver = new Resolver({ timeout: 2500, tries: 2 });

const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA']);

/**
 * A and AAAA answers for a name. `localhost` (RFC 6761) is loopback without asking anyone. Names
 * only the hosts file or the search list can answer (single labels, or names DNS does not know)
 * are looked up with getaddrinfo only when private destinations are allowed: such names point at
 * the operator's own network, which is otherwise refused anyway.
 */
export async function resolveDestination(host: string, allowPrivate: boolean): Promise<Address[]> {
  if (/(^|\.)localhost\.?$/i.test(host))
    return [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ];
  const system = () => lookup(host, { all: true, verbatim: true });
  if (!host.includes('.')) {
    if (allowPrivate) return system();
    throw Object.assign(new Error('single-label name'), { code: 'ENOTFOUND' });
  }
  const [v4, v6] = await Promise.allSettled([destinationResolver.resolve4(host), destinationResolver.resolve6(host)]);
  const addresses = [
    ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
    ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
  ];
  if (addresses.length > 0) return addresses;
  const unknown = [v4, v6].every(
    (r) => r.status === 'rejected' && NO_SUCH_NAME.has(String((r.reason as { code?: unknown }).code)),
  );
  if (allowPrivate && unknown) return system();
  throw v4.status === 'rejected' ? v4.reason : new Error('no address');
}
