import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import cassandra from 'cassandra-driver';
import type { NodeLayout } from './nodeLayout.js';
import { probeCql } from './probeCql.js';
import { isProcessAlive } from './processAlive.js';

/**
 * A node being waited for: its process, and the child handle when this process spawned it.
 *
 * @internal
 */
export interface WatchedNode {
  layout: NodeLayout;
  pid: number;
  child?: ChildProcess;
}

/**
 * Why a cluster did not become ready; `node` is set when one node is to blame.
 *
 * @internal
 */
export class ClusterNotReadyError extends Error {
  override readonly name = 'ClusterNotReadyError';

  constructor(
    readonly reason: string,
    readonly node?: NodeLayout,
  ) {
    super(node ? `node ${node.index} (${node.address}): ${reason}` : reason);
  }
}

/**
 * Waits until every node answers CQL and, seen through the driver, the nodes form one ring:
 * the driver knows and reaches every node, every node lists all others in `system.peers` and
 * considers them alive.
 * The log line "Starting listening for CQL clients" is not enough for a ring: a node opens its
 * CQL port before gossip has told it about its peers, and a write at consistency ALL would then
 * fail as unavailable.
 *
 * Throws {@link ClusterNotReadyError} at `deadline` or as soon as a node's process exits.
 *
 * @internal
 */
export async function waitForCluster(
  nodes: WatchedNode[],
  port: number,
  deadline: number,
  log?: (line: string) => void,
  access: DevAccess = {},
): Promise<void> {
  const started = Date.now();
  const pending = new Set(nodes);
  while (pending.size > 0) {
    for (const node of pending) {
      assertRunning(node);
      if (await probeCql(node.layout.address, port, 1500, probeTls(access))) {
        pending.delete(node);
        const secs = ((Date.now() - started) / 1000).toFixed(1);
        log?.(`node ${node.layout.index} (${node.layout.address}) answers CQL after ${secs} s`);
      }
    }
    if (pending.size === 0) break;
    const late = [...pending][0];
    if (Date.now() >= deadline && late) {
      throw new ClusterNotReadyError('no CQL answer before the timeout', late.layout);
    }
    await sleep(500);
  }
  await waitForRing(nodes, port, deadline, access);
}

/**
 * How to get into a cluster started with `--tls` (`ca`: PEM of its test CA) or `--auth`
 * (`credentials`: a role that may log in).
 *
 * @internal
 */
export interface DevAccess {
  ca?: string;
  /** With `--tls-client-auth`: the client certificate and key (PEM) to present. */
  clientCert?: { cert: string; key: string };
  credentials?: { username: string; password: string };
}

/** How {@link probeCql} reaches a node with this access: plaintext, TLS, or TLS with a certificate. @internal */
export function probeTls(access: DevAccess): boolean | { cert: string; key: string } {
  if (access.ca === undefined) return false;
  return access.clientCert ?? true;
}

/**
 * Driver options for {@link DevAccess}.
 *
 * @internal
 */
export function devDriverOptions(
  access: DevAccess,
): Pick<cassandra.ClientOptions, 'sslOptions' | 'authProvider'> {
  return {
    ...(access.ca === undefined
      ? {}
      : {
          sslOptions: {
            ca: access.ca,
            rejectUnauthorized: true,
            ...(access.clientCert ?? {}),
          },
        }),
    ...(access.credentials === undefined
      ? {}
      : {
          authProvider: new cassandra.auth.PlainTextAuthProvider(
            access.credentials.username,
            access.credentials.password,
          ),
        }),
  };
}

async function waitForRing(
  nodes: WatchedNode[],
  port: number,
  deadline: number,
  access: DevAccess,
): Promise<void> {
  const addresses = nodes.map((n) => n.layout.address);
  let problem = 'not checked yet';
  while (Date.now() < deadline) {
    const client = new cassandra.Client({
      contactPoints: addresses,
      localDataCenter: 'datacenter1',
      protocolOptions: { port },
      socketOptions: { connectTimeout: 5000, readTimeout: 10_000 },
      // With --auth the default superuser appears a moment after CQL opens; until then the
      // login fails and this loop tries again.
      ...devDriverOptions(access),
    });
    try {
      await client.connect();
      while (Date.now() < deadline) {
        nodes.forEach(assertRunning);
        const found = await ringProblem(client, addresses);
        if (found === undefined) return;
        problem = found;
        await sleep(500);
      }
    } catch (err) {
      if (err instanceof ClusterNotReadyError) throw err;
      problem = err instanceof Error ? err.message : String(err);
    } finally {
      await client.shutdown().catch(() => undefined);
    }
    await sleep(1000);
  }
  throw new ClusterNotReadyError(`nodes did not form a ring in time (last seen: ${problem})`);
}

async function ringProblem(
  client: cassandra.Client,
  addresses: string[],
): Promise<string | undefined> {
  const hosts = client.hosts.values();
  for (const address of addresses) {
    // The driver names hosts "address:port".
    const host = hosts.find((h) => h.address.split(':')[0] === address);
    if (!host) return `the driver does not know ${address} yet`;
    if (!host.isUp()) return `the driver sees ${address} down`;
    const peers = await client.execute('SELECT peer FROM system.peers', [], { host });
    if (peers.rowLength !== addresses.length - 1) {
      return `${address} lists ${peers.rowLength} of ${addresses.length - 1} peers`;
    }
  }
  if (addresses.length === 1) return undefined;
  for (const host of hosts) {
    // A peer row appears before gossip has marked the peer alive, and until then a request at
    // consistency ALL fails as unavailable. system_traces is replicated twice around the whole
    // ring, so a range read of it at ALL needs every node alive in the coordinator's eyes:
    // exactly the condition tests of a ring depend on.
    try {
      await client.execute('SELECT session_id FROM system_traces.sessions LIMIT 1', [], {
        host,
        consistency: cassandra.types.consistencies.all,
      });
    } catch (err) {
      return `${host.address} does not see every node alive yet (${(err as Error).message})`;
    }
  }
  return undefined;
}

function assertRunning(node: WatchedNode): void {
  const { child } = node;
  if (child && (child.exitCode !== null || child.signalCode !== null)) {
    const how = child.signalCode ? `signal ${child.signalCode}` : `exit code ${child.exitCode}`;
    throw new ClusterNotReadyError(`the process exited early (${how})`, node.layout);
  }
  if (!isProcessAlive(node.pid)) {
    throw new ClusterNotReadyError('the process exited early', node.layout);
  }
}
