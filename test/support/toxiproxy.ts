import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { endChild, tail } from './spawnPinned.js';

/** A toxic as toxiproxy's HTTP API takes it (`POST /proxies/<proxy>/toxics`). @internal */
export interface Toxic {
  name: string;
  /** `reset_peer` and `timeout` are the fault benchmark's (connection resets, black holes). */
  type: 'latency' | 'bandwidth' | 'reset_peer' | 'timeout';
  /** `upstream`: client to server; `downstream`: server to client. */
  stream: 'upstream' | 'downstream';
  /**
   * latency: `latency` and `jitter` in ms; bandwidth: `rate` in KB/s; reset_peer: `timeout`
   * in ms before the reset; timeout: `timeout` in ms before closing (0: hold data until the
   * toxic is removed).
   */
  attributes: Record<string, number>;
}

/** A running `toxiproxy-server` child process. @internal */
export interface Toxiproxy {
  pid: number;
  /** `http://127.0.0.1:<port>` of its API. */
  api: string;
  /** Creates a proxy listening on a free port of 127.0.0.1; resolves to that port. */
  createProxy(name: string, upstream: string): Promise<number>;
  /** Replaces the proxy's toxics (existing connections see the change at once). */
  setToxics(proxy: string, toxics: readonly Toxic[]): Promise<void>;
  /** Points the proxy at another upstream (e.g. a restarted server on a new port). */
  setUpstream(proxy: string, upstream: string): Promise<void>;
  /** SIGTERM, SIGKILL after a while; resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts `toxiproxy-server` (the binary `scripts/tools/toxiproxy.sh` installs) with its API on
 * a free port of 127.0.0.1, and resolves once the API answers. The caller must {@link
 * Toxiproxy.stop} it, also on error. @internal
 */
export async function startToxiproxy(
  binary: string,
  options: { onSpawn?: (pid: number) => void; startTimeoutMs?: number } = {},
): Promise<Toxiproxy> {
  const port = await freePort();
  const child: ChildProcess = spawn(binary, ['-host', '127.0.0.1', '-port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid !== undefined) options.onSpawn?.(child.pid);
  const output = tail(child.stderr);
  child.stdout?.resume();
  const api = `http://127.0.0.1:${port}`;
  const exited = once(child, 'exit').then(([code, signal]) => {
    throw new Error(`toxiproxy-server exited (${signal ?? `code ${code}`})\n${output()}`);
  });
  exited.catch(() => undefined);
  try {
    const deadline = Date.now() + (options.startTimeoutMs ?? 10_000);
    for (;;) {
      const up = await Promise.race([
        fetch(`${api}/version`).then(
          (r) => r.ok,
          () => false,
        ),
        exited,
      ]);
      if (up) break;
      if (Date.now() > deadline) throw new Error(`toxiproxy-server did not answer at ${api}`);
      await sleep(50);
    }
  } catch (err) {
    await endChild(child, 2_000);
    throw err;
  }

  const call = async (method: string, route: string, body?: unknown): Promise<unknown> => {
    const response = await fetch(`${api}${route}`, {
      method,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    const text = await response.text();
    if (!response.ok) {
      throw new Error(`toxiproxy ${method} ${route}: ${response.status} ${text}`);
    }
    return text ? (JSON.parse(text) as unknown) : undefined;
  };

  return {
    pid: child.pid ?? -1,
    api,
    createProxy: async (name, upstream) => {
      const proxy = (await call('POST', '/proxies', {
        name,
        listen: '127.0.0.1:0',
        upstream,
        enabled: true,
      })) as { listen: string };
      return Number(proxy.listen.slice(proxy.listen.lastIndexOf(':') + 1));
    },
    setToxics: async (proxy, toxics) => {
      const present = (await call('GET', `/proxies/${proxy}/toxics`)) as { name: string }[];
      for (const t of present) await call('DELETE', `/proxies/${proxy}/toxics/${t.name}`);
      for (const t of toxics) {
        await call('POST', `/proxies/${proxy}/toxics`, { ...t, toxicity: 1 });
      }
    },
    setUpstream: async (proxy, upstream) => {
      await call('POST', `/proxies/${proxy}`, { upstream });
    },
    stop: () => endChild(child, 5_000),
  };
}

/** A TCP port of 127.0.0.1 that was free a moment ago. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}
