// A connection pinned to the address a destination check resolved (webhooks/ssrf.ts): handed to
// http.request as its `lookup`, so the socket goes to the address just checked and never to a
// second DNS answer (a rebinding server's private address). Used by webhook deliveries and calls
// to network peers alike.
import type { LookupFunction } from 'node:net';

export function pinnedLookup(address: string, family: number): LookupFunction {
  return (_host, options, callback) => {
    // Node asks for every address (`all`) when autoSelectFamily is on: the one checked is all there is.
    if ((options as { all?: boolean }).all)
      (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [
        { address, family },
      ]);
    else callback(null, address, family);
  };
}
