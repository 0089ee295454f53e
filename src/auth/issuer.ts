// Which `iss` a token carries and which ones verification accepts (docs/operations.md, "OAuth
// discovery and token checks"). Discovery clients require the metadata's `issuer` to equal the URL
// they discovered from, and a server listening on loopback is reached as localhost, 127.0.0.1 or
// [::1] alike: without VOUCH_ISSUER or VOUCH_PUBLIC_URL, a request made through one of those names
// gets it as its issuer, and every such name verifies. The set is fixed at start and never taken
// from an arbitrary Host header, so a client cannot make us sign (or accept) an issuer of its choosing.
import { listenUrl, type Config } from '../config/env.ts';

export interface TokenIssuers {
  /** the `iss` of tokens whose request came through no alias (and the only one when configured) */
  issuer: string;
  /** origins a request may select as its issuer; verification accepts each of them */
  aliases: string[];
  /** other `iss` values verification accepts (the pre-URL default) */
  formerIssuers: string[];
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** The listen hosts that mean "this machine's loopback" once a client connects: loopback, or every interface. */
function reachableOnLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    bare === 'localhost' || bare === '::1' || bare === '::' || bare === '0.0.0.0' || /^127\.\d+\.\d+\.\d+$/.test(bare)
  );
}

export function tokenIssuers(
  config: Pick<Config, 'issuer' | 'formerIssuers' | 'publicUrl' | 'host' | 'port'>,
): TokenIssuers {
  const derived = config.publicUrl === undefined && config.issuer === listenUrl(config.host, config.port);
  const aliases =
    derived && reachableOnLoopback(config.host) ? LOOPBACK_NAMES.map((name) => `http://${name}:${config.port}`) : [];
  return {
    issuer: config.issuer,
    aliases: aliases.filter((a) => a !== config.issuer),
    formerIssuers: config.formerIssuers,
  };
}
