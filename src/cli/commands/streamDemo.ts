import { spawn, type ChildProcess } from 'node:child_process';
import { LoaderClient } from '../../client/LoaderClient.js';
import type { DbConfig } from '../../core/index.js';
import { createProgress, type Progress } from '../progress.js';
import { serveChildEnv, waitUntilServing } from '../serveChild.js';

/** One epoch's figures as the demo's client saw them. */
export interface EpochFigures {
  epoch: number;
  samples: number;
  /** Sample payload bytes received (as `bench stream` counts them). */
  bytes: number;
  seconds: number;
  /** True when every sample of the split arrived exactly once, and nothing else did. */
  exactlyOnce: boolean;
}

/** Options of {@link streamDemo}. */
export interface StreamDemoOptions {
  db: DbConfig;
  dataset: string;
  split: string;
  /** The split's ids as the database holds them (16 bytes each): what every epoch must deliver. */
  splitIds: Buffer;
  epochs: number;
  batchSize: number;
  onEpoch: (figures: EpochFigures) => void;
  /** Lines about the loader process (its address, its warnings), for the person watching. */
  log: (line: string) => void;
}

/** How long `serve` may take to say it serves before the demo gives up. */
const START_TIMEOUT_MS = 60_000;
/** After SIGTERM, how long `serve` may take to drain and exit before SIGKILL. */
const STOP_TIMEOUT_MS = 20_000;

/**
 * Runs the loader as users run it, `scylla-loader serve` in a process of its own on free
 * ports, and streams `epochs` epochs of `split` from it through the client SDK in this
 * process, the way a trainer would. Each epoch is checked against `splitIds`: every id of the
 * split exactly once, no other id. The loader is stopped with SIGTERM (a graceful drain) at
 * the end, also when the stream fails.
 */
export async function streamDemo(options: StreamDemoOptions): Promise<EpochFigures[]> {
  const expected = new Set<string>();
  for (let i = 0; i < options.splitIds.length; i += 16) {
    expected.add(options.splitIds.toString('hex', i, i + 16));
  }
  const serve = await startServe(options.db, options.log);
  const client = new LoaderClient(serve.address);
  const results: EpochFigures[] = [];
  // Made at an epoch's first batch, so that the display's rate leaves the wait before it out.
  let progress: Progress | undefined;
  try {
    let seen = new Set<string>();
    let count = 0;
    let bytes = 0;
    let foreign = 0;
    let started = performance.now();
    for await (const batch of client.streamBatches({
      dataset: options.dataset,
      split: options.split,
      batchSize: options.batchSize,
      seed: 42,
      epochs: options.epochs,
    })) {
      for (let i = 0; i < batch.idBytes.length; i += 16) {
        const id = batch.idBytes.toString('hex', i, i + 16);
        if (!expected.has(id)) foreign++;
        seen.add(id);
      }
      count += batch.samples.length;
      for (const sample of batch.samples) bytes += sample.length;
      progress ??= createProgress(`epoch ${batch.epoch}`, expected.size);
      progress.update(count, bytes);
      if (batch.lastInEpoch) {
        const figures: EpochFigures = {
          epoch: batch.epoch,
          samples: count,
          bytes,
          seconds: (performance.now() - started) / 1000,
          exactlyOnce: foreign === 0 && count === expected.size && seen.size === expected.size,
        };
        progress.stop();
        progress = undefined;
        results.push(figures);
        options.onEpoch(figures);
        seen = new Set();
        count = 0;
        bytes = 0;
        foreign = 0;
        started = performance.now();
      }
    }
  } finally {
    progress?.stop();
    client.close();
    await serve.stop();
  }
  return results;
}

/** A running `serve` child process. */
interface ServeChild {
  address: string;
  stop(): Promise<void>;
}

/**
 * Starts `serve` with the same Node binary and flags as this process (so it runs from source
 * through tsx, or from the build, as this process does), on 127.0.0.1 with free ports, and
 * resolves once its `loader serving` log line names its port. Warnings and errors it logs are
 * passed to `log`; if it exits before serving, the error carries the end of its output.
 */
async function startServe(db: DbConfig, log: (line: string) => void): Promise<ServeChild> {
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, 'serve'], {
    env: { ...process.env, ...serveChildEnv(db) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (text: string): void => {
    output = (output + text).slice(-4000);
  };
  child.stderr!.setEncoding('utf8').on('data', keep);
  child.stdout!.setEncoding('utf8').on('data', keep);
  try {
    const grpcPort = await waitUntilServing(child, {
      timeoutMs: START_TIMEOUT_MS,
      output: () => output,
      // pino levels: 40 warn, 50 error, 60 fatal.
      onRecord: (record) => {
        if (Number(record['level']) >= 40) log(`loader: ${String(record['msg'])}`);
      },
    });
    log(`loader process ${child.pid} serving on 127.0.0.1:${grpcPort}`);
    return { address: `127.0.0.1:${grpcPort}`, stop: () => stopChild(child) };
  } catch (err) {
    await stopChild(child);
    throw err;
  }
}

/** SIGTERM (the loader drains its streams and exits), SIGKILL if it is still there later. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}
