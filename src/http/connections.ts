// Who may hold a connection to this process (docs/operations.md, "Connections"). Node's own
// `maxConnections` counts every socket alike, so a few clients that send one request each and
// then idle on keep-alive lock everyone else out until the keep-alive timeout. Here only sockets
// that are doing something hold their place: when the process is full, the connection idle the
// longest is closed to make room; one source (an address, an IPv6 /64) may hold only a share of
// the cap; and idle connections close after a short keep-alive timeout anyway.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { BlockList, isIPv4, isIPv6, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/env.ts';
import { limitSource } from '../lib/source.ts';

export interface ConnectionLimits {
  maxConnections: number;
  maxPerSource: number;
  /** how long a request (headers and body) may take to arrive; answered 408 after it */
  requestTimeoutMs: number;
  /** peers not counted per source: trusted proxies carry many clients' requests */
  exempt: (address: string) => boolean;
}

interface Tracked {
  /** undefined: not counted per source */
  source: string | undefined;
  inFlight: number;
}

/** An IPv4 peer of a dual-stack listener shows as ::ffff:a.b.c.d; one source either way. */
function plainAddress(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

const PROXY_KEYWORDS: Record<string, Array<[string, number, 'ipv4' | 'ipv6']>> = {
  loopback: [
    ['127.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
  ],
  linklocal: [
    ['169.254.0.0', 16, 'ipv4'],
    ['fe80::', 10, 'ipv6'],
  ],
  uniquelocal: [
    ['10.0.0.0', 8, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
    ['fc00::', 7, 'ipv6'],
  ],
};

/**
 * The peers VOUCH_TRUST_PROXY names. A hop count names no address: every peer is then taken to
 * be a proxy, and limiting connections per source is left to the proxy.
 */
export function trustedProxies(trustProxy: Config['trustProxy']): (address: string) => boolean {
  if (trustProxy === false) return () => false;
  if (typeof trustProxy === 'number') return () => true;
  const list = new BlockList();
  for (const entry of trustProxy) {
    const keyword = PROXY_KEYWORDS[entry];
    if (keyword) {
      for (const [net, prefix, type] of keyword) list.addSubnet(net, prefix, type);
      continue;
    }
    const [address = '', prefix] = entry.split('/');
    const type = isIPv4(address) ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return (address) => {
    const plain = plainAddress(address);
    return (isIPv4(plain) || isIPv6(plain)) && list.check(plain, isIPv4(plain) ? 'ipv4' : 'ipv6');
  };
}

/** Node's timers, which Fastify leaves at their defaults, and the admission rules above. */
export function limitConnections(app: FastifyInstance, limits: ConnectionLimits): void {
  const server = app.server as typeof app.server & { connectionsCheckingInterval: number };
  // A request whose headers or body stall is answered 408 (clientErrorHandler) once the timeout
  // has passed since it started, checked a few times within that period.
  server.headersTimeout = limits.requestTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.connectionsCheckingInterval = Math.max(25, Math.min(1000, Math.floor(limits.requestTimeoutMs / 4)));
  const maxPerSource = Math.min(limits.maxPerSource, limits.maxConnections);

  const sockets = new Map<Socket, Tracked>();
  const perSource = new Map<string, number>();
  // Idle = has answered at least one request and has none in flight. Sets keep insertion order,
  // so the first entry is the socket idle the longest. A socket that has not yet sent a complete
  // request is not idle: it is bounded by the request timeout instead.
  const idle = new Set<Socket>();
  const idleBySource = new Map<string, Set<Socket>>();

  const setIdle = (socket: Socket, tracked: Tracked, isIdle: boolean) => {
    const ofSource = tracked.source === undefined ? undefined : idleBySource.get(tracked.source);
    if (isIdle) {
      idle.add(socket);
      if (tracked.source !== undefined) {
        if (ofSource) ofSource.add(socket);
        else idleBySource.set(tracked.source, new Set([socket]));
      }
    } else {
      idle.delete(socket);
      ofSource?.delete(socket);
      if (ofSource?.size === 0) idleBySource.delete(tracked.source!);
    }
  };

  const forget = (socket: Socket) => {
    const tracked = sockets.get(socket);
    if (!tracked) return;
    sockets.delete(socket);
    setIdle(socket, tracked, false);
    if (tracked.source !== undefined) {
      const count = (perSource.get(tracked.source) ?? 1) - 1;
      if (count <= 0) perSource.delete(tracked.source);
      else perSource.set(tracked.source, count);
    }
  };

  /** Closes the longest-idle socket of `candidates`; false when there is none. */
  const reclaim = (candidates: Set<Socket> | undefined): boolean => {
    const oldest = candidates?.values().next().value;
    if (oldest === undefined) return false;
    forget(oldest);
    oldest.destroy();
    return true;
  };

  let refusedSinceReport = 0;
  let lastReport = 0;
  const refuse = (socket: Socket, reason: 'per_source' | 'capacity') => {
    socket.destroy();
    refusedSinceReport++;
    const now = Date.now();
    // At most one line a minute: a flood must not also flood the log.
    if (now - lastReport >= 60_000) {
      app.log.warn(
        { event: 'connection_refused', reason, refused: refusedSinceReport, open: sockets.size },
        'connections refused: the process or one source is at its connection limit',
      );
      refusedSinceReport = 0;
      lastReport = now;
    }
  };

  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const source = limits.exempt(address) ? undefined : limitSource(plainAddress(address));
    if (source !== undefined && (perSource.get(source) ?? 0) >= maxPerSource && !reclaim(idleBySource.get(source))) {
      return refuse(socket, 'per_source');
    }
    if (sockets.size >= limits.maxConnections && !reclaim(idle)) return refuse(socket, 'capacity');
    sockets.set(socket, { source, inFlight: 0 });
    if (source !== undefined) perSource.set(source, (perSource.get(source) ?? 0) + 1);
    socket.once('close', () => forget(socket));
  });

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    const tracked = sockets.get(socket);
    if (!tracked) return;
    if (tracked.inFlight++ === 0) setIdle(socket, tracked, false);
    response.once('close', () => {
      tracked.inFlight--;
      if (tracked.inFlight === 0 && sockets.has(socket) && !socket.destroyed) setIdle(socket, tracked, true);
    });
  });
}

/** How long a drain keeps idle keep-alive connections open to answer what arrives on them. */
const DRAIN_IDLE_GRACE_MS = 1000;

/**
 * At the start of a drain, Node closes every idle keep-alive connection at once, so a request a
 * client was sending on one at that moment meets a reset. Held for `graceMs` instead, a request
 * arriving on one gets the drain's 503 with `Connection: close` (app.ts) and can go elsewhere;
 * then the idle ones are closed, and a connection that goes idle meanwhile times out by then.
 */
export function holdIdleConnections(server: Server, graceMs = DRAIN_IDLE_GRACE_MS): void {
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {};
  server.keepAliveTimeout = Math.min(server.keepAliveTimeout || graceMs, graceMs);
  setTimeout(() => {
    server.closeIdleConnections = closeIdle;
    closeIdle();
  }, graceMs).unref();
}
