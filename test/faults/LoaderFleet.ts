import { readdirSync, readFileSync } from 'node:fs';
import { procStat } from '../support/index.js';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DbConfig } from '../../src/core/index.js';
import { serveChildEnv, waitUntilServing } from '../../src/cli/index.js';
import { cliMainArgs } from '../support/index.js';
import { endChild, spawnPinned, tail } from '../support/index.js';

/**
 * The pids of the live node:cluster workers forked by `pid` (a `serve --workers N` primary):
 * its children whose environment holds `NODE_UNIQUE_ID`, which node:cluster sets in every
 * worker (other children, such as a TypeScript loader's build service, have none). Empty
 * where `/proc` cannot be read.
 */
function clusterWorkerPids(pid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const workers: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (!stat || stat.ppid !== pid || stat.state === 'Z') continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
    } catch {
      continue;
    }
    if (environ.split('\0').some((v) => v.startsWith('NODE_UNIQUE_ID='))) {
      workers.push(Number(entry));
    }
  }
  return workers;
}

/** One `serve` process of a {@link LoaderFleet}. @internal */
export interface FleetLoader {
  pid: number;
  /** `127.0.0.1:<port>` of its gRPC server. */
  address: string;
  child: ChildProcess;
  /** Set before the fleet signals it, so its exit is not taken for a crash. */
  injected: boolean;
  /** Its worker processes when it started serving (`serve --workers N`; none for 1). */
  workers: number[];
}

/** How long the workers of a loader that exited may take to follow it. */
const WORKER_EXIT_MS = 10_000;

/** How {@link LoaderFleet} starts its loaders. @internal */
export interface LoaderFleetOptions {
  /** The database (or the proxy in front of it) the loaders read from. */
  db: DbConfig;
  /** Extra environment of every loader (limits, grace period). */
  env?: NodeJS.ProcessEnv;
  log: (line: string) => void;
}

/**
 * The loader processes of a fault run: real `serve` children sharing one resume key (as the
 * replicas of a deployment do), so any of them resumes a stream another began. It tells the
 * faults it injects (signals it sends) from crashes: every exit it did not cause is counted in
 * {@link LoaderFleet.crashes}, with the end of the process's output kept for the report.
 *
 * @internal
 */
export class LoaderFleet {
  /** The key every loader of the fleet signs resume tokens with. */
  readonly resumeKey = randomBytes(32).toString('hex');
  readonly loaders: FleetLoader[] = [];
  /** Exits that no fault caused, with the process's last output. */
  readonly crashes: { pid: number; exit: string; output: string }[] = [];
  /**
   * Workers still running, or a port still open, after their loader (the cluster primary)
   * exited: a worker outliving its primary would keep streams (and memory) nobody can drain.
   * The fleet kills them; a scenario reports them.
   */
  readonly orphans: { pid: number; primary: number; after: string }[] = [];
  private current: FleetLoader | undefined;

  constructor(private readonly options: LoaderFleetOptions) {}

  /** Address of the loader the trainers are sent to (the latest started). */
  address(): string {
    return this.active.address;
  }

  /** The loader the trainers are sent to. */
  get active(): FleetLoader {
    if (!this.current) throw new Error('no loader started');
    return this.current;
  }

  /** Starts one more loader; it becomes the one trainers are sent to unless `standby`. */
  async start(opts: { standby?: boolean } = {}): Promise<FleetLoader> {
    const childEnv = serveChildEnv(this.options.db);
    const child = spawnPinned([...cliMainArgs(), 'serve', '--host', '127.0.0.1'], {
      env: {
        ...childEnv,
        SCYLLA_LOADER_RESUME_KEY: this.resumeKey,
        // The faults are the database's and the network's: every read goes there, none is
        // answered by the sample cache `serve` sizes by default.
        SCYLLA_LOADER_CACHE_MEMORY_BYTES: '0',
        ...this.options.env,
      },
    });
    const stderr = tail(child.stderr);
    const stdout = tail(child.stdout, 8000);
    const port = await waitUntilServing(child, {
      timeoutMs: 60_000,
      output: () => `${stderr()}\n${stdout()}`,
      readyFile: childEnv.SCYLLA_LOADER_READY_FILE,
    }).catch(async (err: unknown) => {
      await endChild(child, 5_000);
      throw err;
    });
    const loader: FleetLoader = {
      pid: child.pid ?? -1,
      address: `127.0.0.1:${port}`,
      child,
      injected: false,
      workers: clusterWorkerPids(child.pid ?? -1),
    };
    child.once('exit', (code, signal) => {
      if (loader.injected) return;
      const exit = signal ?? `code ${code}`;
      this.crashes.push({ pid: loader.pid, exit, output: `${stderr()}\n${stdout()}` });
      this.options.log(`loader ${loader.pid} exited by itself (${exit})`);
    });
    this.loaders.push(loader);
    if (!opts.standby) this.current = loader;
    const workers = loader.workers.length > 0 ? ` (workers ${loader.workers.join(', ')})` : '';
    this.options.log(`loader ${loader.pid} serving on ${loader.address}${workers}`);
    return loader;
  }

  /** Sends trainers to `loader` from now on (e.g. a standby replica after a kill). */
  switchTo(loader: FleetLoader): void {
    this.current = loader;
  }

  /**
   * Injects a fault: sends `signal` to `loader` (default the active one) and resolves once it
   * has exited, and its workers with it (see {@link LoaderFleet.orphans}). SIGTERM is a
   * graceful shutdown, so it may take the configured grace period.
   */
  async kill(signal: 'SIGKILL' | 'SIGTERM', loader = this.active): Promise<void> {
    await this.end(loader, signal, async () => {
      const exited = once(loader.child, 'exit');
      loader.child.kill(signal);
      await exited;
    });
  }

  /** Ends every loader still running (not counted as crashes). */
  async stopAll(): Promise<void> {
    await Promise.all(this.loaders.map((l) => this.end(l, 'stop', () => endChild(l.child, 5_000))));
  }

  /**
   * Ends `loader` with `stop` unless it already exited, then waits for its workers to exit
   * too (a SIGKILLed primary's workers end when their IPC channel closes) and for its port to
   * refuse connections; records and kills any that outlive {@link WORKER_EXIT_MS}.
   */
  private async end(loader: FleetLoader, after: string, stop: () => Promise<void>): Promise<void> {
    loader.injected = true;
    if (loader.child.exitCode !== null || loader.child.signalCode !== null) return;
    const workers = clusterWorkerPids(loader.pid);
    await stop();
    const deadline = performance.now() + WORKER_EXIT_MS;
    let alive = workers.filter(isRunning);
    while (alive.length > 0 && performance.now() < deadline) {
      await sleep(50);
      alive = alive.filter(isRunning);
    }
    for (const pid of alive) {
      this.orphans.push({ pid, primary: loader.pid, after });
      this.options.log(`worker ${pid} of loader ${loader.pid} outlived it (${after}); killing it`);
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone in the meantime.
      }
    }
    const port = Number(loader.address.split(':')[1]);
    if (await acceptsConnections(port)) {
      this.orphans.push({ pid: -1, primary: loader.pid, after: `${after}: port ${port} open` });
      this.options.log(`port ${port} of loader ${loader.pid} still open after ${after}`);
    }
  }
}

/** Whether `pid` still runs (a zombie holds no socket: it counts as gone). */
function isRunning(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(1000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(false));
  });
}
