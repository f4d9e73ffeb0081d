import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import {
  type OffloadInput,
  type OffloadOutput,
  type OffloadTask,
  type OffloadTaskName,
  offloadTask,
} from './offloadTasks.js';
import type { OffloadReply, OffloadRequest } from './offloadWorker.js';

/**
 * Inputs below this many positions or ids run inline: a permutation of 100k takes a few
 * milliseconds, less than starting a thread.
 */
export const OFFLOAD_INLINE_BELOW = 100_000;

/** How an {@link Offloader} runs its tasks. */
export interface OffloaderOptions {
  /** Threads running tasks at once at most; further tasks wait in line (cancellably). */
  maxThreads?: number;
  /** Inputs of less work than this run inline (see {@link OFFLOAD_INLINE_BELOW}). */
  inlineBelow?: number;
  /** How long a thread left idle is kept for the next task (milliseconds). */
  idleMs?: number;
}

/** What an {@link Offloader} has done, for tests and figures. */
export interface OffloadFigures {
  /** Tasks run inline (small inputs). */
  inline: number;
  /** Tasks run on a thread, finished or not. */
  offloaded: number;
  /** Tasks stopped because their signal fired (their thread terminated). */
  cancelled: number;
  threadsStarted: number;
  /** Threads that have exited (terminated on cancel, idle too long, or crashed). */
  threadsExited: number;
}

/** A waiter for a thread slot. @internal */
interface SlotWaiter {
  grant(): void;
}

/**
 * Runs `OFFLOAD_TASKS`' work off the event loop, so that a permutation of 10^7 positions
 * or the sort of a large split's ids does not stall every other stream of the process (health
 * checks included): small inputs inline, the rest on a small pool of worker threads, their
 * large buffers moved between threads rather than copied. A task whose signal fires rejects at
 * once with the signal's reason and its thread is terminated, so cancelled work stops.
 *
 * The thread entry is `offloadWorker.js` beside this file in the build; from the sources (tsx,
 * vitest) it is the `.ts` file, compiled on the thread by tsx's loader (a development
 * dependency, present wherever the sources run).
 */
export class Offloader {
  readonly maxThreads: number;
  readonly inlineBelow: number;
  readonly idleMs: number;
  readonly figures: OffloadFigures = {
    inline: 0,
    offloaded: 0,
    cancelled: 0,
    threadsStarted: 0,
    threadsExited: 0,
  };
  private readonly idle: Worker[] = [];
  private readonly idleTimers = new Map<Worker, NodeJS.Timeout>();
  private readonly waiting: SlotWaiter[] = [];
  private busy = 0;

  constructor(options: OffloaderOptions = {}) {
    this.maxThreads = Math.max(1, options.maxThreads ?? Math.min(4, availableParallelism() - 1));
    this.inlineBelow = options.inlineBelow ?? OFFLOAD_INLINE_BELOW;
    this.idleMs = options.idleMs ?? 10_000;
  }

  /** Tasks running on threads now. */
  get running(): number {
    return this.busy;
  }

  /** Threads alive now (running a task or idle). */
  get threads(): number {
    return this.figures.threadsStarted - this.figures.threadsExited;
  }

  /**
   * Runs task `name` on `input`: inline when small, else on a thread once one is free. The
   * input's large buffers are moved to the thread (unusable here after). Rejects with
   * `signal`'s reason as soon as it fires, whether the task waits for a thread or runs.
   */
  async run<K extends OffloadTaskName>(
    name: K,
    input: OffloadInput<K>,
    signal?: AbortSignal,
  ): Promise<OffloadOutput<K>> {
    signal?.throwIfAborted();
    const task = offloadTask(name);
    if (task.work(input) < this.inlineBelow) {
      this.figures.inline++;
      return task.run(input) as OffloadOutput<K>;
    }
    await this.takeSlot(signal);
    try {
      // Cancelled while the slot was handed over: give it back before starting anything.
      signal?.throwIfAborted();
      this.figures.offloaded++;
      return (await this.onThread(task, { name, input }, signal)) as OffloadOutput<K>;
    } finally {
      this.busy--;
      this.waiting.shift()?.grant();
    }
  }

  /** Terminates the idle threads (a running task keeps its own until it ends). */
  async close(): Promise<void> {
    const idle = this.idle.splice(0);
    await Promise.all(idle.map((w) => w.terminate()));
  }

  private takeSlot(signal: AbortSignal | undefined): Promise<void> {
    if (this.busy < this.maxThreads) {
      this.busy++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: SlotWaiter = {
        grant: () => {
          signal?.removeEventListener('abort', leave);
          this.busy++;
          resolve();
        },
      };
      const leave = (): void => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal!.reason as Error);
      };
      signal?.addEventListener('abort', leave, { once: true });
      this.waiting.push(waiter);
    });
  }

  private onThread(
    task: OffloadTask<unknown, unknown>,
    request: OffloadRequest,
    signal: AbortSignal | undefined,
  ): Promise<unknown> {
    const worker = this.takeThread();
    return new Promise<unknown>((resolve, reject) => {
      const settle = (): void => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
      };
      const onMessage = (reply: OffloadReply): void => {
        settle();
        this.park(worker);
        if (reply.ok) resolve(task.revive ? task.revive(reply.output) : reply.output);
        else reject(threadError(reply.error));
      };
      let failure: Error | undefined;
      const onError = (err: Error): void => {
        failure = err;
      };
      const onExit = (code: number): void => {
        settle();
        reject(failure ?? new Error(`an offload thread exited with code ${code} mid-task`));
      };
      const onAbort = (): void => {
        settle();
        this.figures.cancelled++;
        void worker.terminate();
        reject(signal!.reason as Error);
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        worker.postMessage(request, task.moveIn?.(request.input) ?? []);
      } catch (err) {
        settle();
        this.park(worker);
        reject(err as Error);
      }
    });
  }

  /** An idle thread, or a new one. */
  private takeThread(): Worker {
    const worker = this.idle.pop();
    if (worker) {
      clearTimeout(this.idleTimers.get(worker));
      this.idleTimers.delete(worker);
      worker.ref();
      return worker;
    }
    const started = startThread();
    this.figures.threadsStarted++;
    // Never unhandled: a thread's uncaught error fails its task (see onThread), and an idle
    // thread has none.
    started.on('error', () => undefined);
    started.once('exit', () => {
      this.figures.threadsExited++;
      const at = this.idle.indexOf(started);
      if (at >= 0) this.idle.splice(at, 1);
      clearTimeout(this.idleTimers.get(started));
      this.idleTimers.delete(started);
    });
    return started;
  }

  /** Keeps a thread that finished its task for the next one, for `idleMs`. */
  private park(worker: Worker): void {
    if (this.idle.length >= this.maxThreads) {
      void worker.terminate();
      return;
    }
    // An idle thread does not keep the process alive (a CLI command ends when its work does).
    worker.unref();
    this.idle.push(worker);
    const timer = setTimeout(() => {
      // Out of the idle list first: a thread being terminated must not be handed a task.
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
      this.idleTimers.delete(worker);
      void worker.terminate();
    }, this.idleMs);
    timer.unref();
    this.idleTimers.set(worker, timer);
  }
}

/** The error a task threw on its thread, as this thread's. @internal */
function threadError(e: { name: string; message: string }): Error {
  const err = e.name === 'RangeError' ? new RangeError(e.message) : new Error(e.message);
  err.name = e.name;
  return err;
}

/** Starts a thread running `offloadWorker` (see {@link Offloader} for how it is found). @internal */
function startThread(): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new Worker(new URL('./offloadWorker.js', here));
  const entry = new URL('./offloadWorker.ts', here).href;
  // tsx registers itself on the main thread only: a thread asks for it through its API.
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot =
    `import(${JSON.stringify(tsx)})` +
    `.then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(boot, { eval: true });
}

let shared: Offloader | undefined;

/** The process's {@link Offloader}, made with the defaults on first use. */
export function sharedOffloader(): Offloader {
  shared ??= new Offloader();
  return shared;
}
