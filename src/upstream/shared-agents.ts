import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { Agent } from 'undici';

/** What a shared agent is chosen by: everything that decides how a connection is opened and trusted. */
export interface ConnectSettings {
  connectMs: number;
  /** Extra trusted CA PEMs, added to Node's default roots. */
  extraCa: string[];
}

export interface AgentLease {
  readonly agent: Agent;
  /** Gives the agent back; the last holder closes it. Call once. */
  release(): Promise<void>;
}

/**
 * Sockets per origin of one shared agent. Every source on that origin draws from it, so it is sized
 * for the most jobs one worker runs at once (REFSYNC_CONCURRENCY is at most 256), each with one
 * request in flight: requests queue for a socket only beyond that.
 */
const CONNECTIONS_PER_ORIGIN = 256;

const agents = new Map<string, { agent: Agent; holders: number }>();

function keyOf(settings: ConnectSettings): string {
  return JSON.stringify([settings.connectMs, settings.extraCa]);
}

/**
 * The HTTPS agent for these settings, shared with every other client that has the same ones. Sources
 * of one origin then reuse each other's keep-alive sockets and TLS sessions instead of each paying
 * a full handshake (P4: a thousand sources of one service). Only connections are shared: every
 * request carries its own client's credential and timeouts, and the origin check stays per request.
 * A different trust set never shares: a resumed TLS session skips certificate verification, so a
 * session verified under one set of CAs must not be reused under another.
 * Redirects are never followed (undici's plain dispatcher does not follow them). The TLS context is
 * built once per agent: given `ca` per connection, Node parses ~140 root certificates for every
 * new socket (about 9 ms of blocked event loop each).
 */
export function leaseAgent(settings: ConnectSettings): AgentLease {
  const key = keyOf(settings);
  let entry = agents.get(key);
  if (!entry) {
    entry = { agent: createAgent(settings), holders: 0 };
    agents.set(key, entry);
  }
  entry.holders++;
  const held = entry;
  return {
    agent: held.agent,
    release: () => {
      held.holders--;
      if (held.holders > 0) return Promise.resolve();
      if (agents.get(key) === held) agents.delete(key);
      return held.agent.close();
    },
  };
}

function createAgent({ connectMs, extraCa }: ConnectSettings): Agent {
  const connect: { timeout: number; secureContext?: SecureContext } = { timeout: connectMs };
  if (extraCa.length > 0) connect.secureContext = createSecureContext({ ca: [...rootCertificates, ...extraCa] });
  return new Agent({ connect, connections: CONNECTIONS_PER_ORIGIN });
}
