import { spawn, type ChildProcess } from 'node:child_process';
import type { DecodedBatch } from '../../client/DecodedBatch.js';
import { LoaderClient } from '../../client/LoaderClient.js';
import type { TransformOptions } from '../../client/TransformOptions.js';
import type { DbConfig } from '../../core/index.js';
import { createProgress, type Progress } from '../progress.js';
import { serveChildEnv, waitUntilReady } from '../serveChild.js';

/** One epoch's figures as the demo's client saw them. */
export interface EpochFigures {
  epoch: number;
  samples: number;
  /** Sample payload bytes received (as `bench stream` counts them); a tensor's bytes with a transform. */
  bytes: number;
  seconds: number;
  /** True when every sample of the split arrived exactly once, and nothing else did. */
  exactlyOnce: boolean;
  /**
   * Only for the transformed epoch: true when every batch carried a uint8 tensor of shape
   * [n, ...{@link TransformedEpoch.tensorShape}] with n its number of samples.
   */
  tensorsAsAsked?: boolean;
}

/** An epoch streamed with a server-side transform, and what its tensors must look like. */
export interface TransformedEpoch {
  /** A raw-output transform: each batch is then one uint8 tensor. */
  transform: TransformOptions;
  /** Height, width and channels every batch's tensor must have after its sample count. */
  tensorShape: readonly [number, number, number];
  /**
   * The split it streams, and its ids as the database holds them: a smaller part than the plain
   * epochs' keeps the demo short, since every sample is decoded on the loader.
   */
  split: string;
  splitIds: Buffer;
}

/** Options of {@link streamDemo}. */
export interface StreamDemoOptions {
  db: DbConfig;
  dataset: string;
  split: string;
  /** The split's ids as the database holds them (16 bytes each): what every epoch must deliver. */
  splitIds: Buffer;
  /** Epochs streamed as stored (the samples' bytes), numbered from 0. */
  epochs: number;
  /** One more epoch after those, from the same loader process, with a server-side transform. */
  transformed?: TransformedEpoch;
  batchSize: number;
  onEpoch: (figures: EpochFigures) => void;
  /** Lines about the loader process (its address, its warnings), for the person watching. */
  log: (line: string) => void;
}

/** How long `serve` may take to say it serves before the demo gives up. */
const START_TIMEOUT_MS = 60_000;
/** After SIGTERM, how long `serve` may take to drain and exit before SIGKILL. */
const STOP_TIMEOUT_MS = 20_000;
/** The demo's seed: the same one for the plain and the transformed epochs. */
const SEED = 42;

/**
 * Runs the loader as users run it, `scylla-loader serve` in a process of its own on free
 * ports, and streams `epochs` epochs of `split` from it through the client SDK in this
 * process, the way a trainer would, then, with `transformed`, one more epoch whose samples the
 * loader decodes and crops into tensors. Each epoch is checked against its split's ids: every
 * id of the split exactly once, no other id. The loader is stopped with SIGTERM (a graceful drain) at
 * the end, also when the stream fails.
 */
export async function streamDemo(options: StreamDemoOptions): Promise<EpochFigures[]> {
  const expected = idSet(options.splitIds);
  const serve = await startServe(options.db, options.log);
  const client = new LoaderClient(serve.address);
  try {
    const request = {
      dataset: options.dataset,
      split: options.split,
      batchSize: options.batchSize,
      seed: SEED,
    };
    const results = await checkedEpochs(
      client.streamBatches({ ...request, epochs: options.epochs }),
      expected,
      options.onEpoch,
    );
    if (options.transformed) {
      // The epoch after the plain ones, so that its number says where it stands.
      results.push(
        ...(await checkedEpochs(
          client.streamBatches({
            ...request,
            split: options.transformed.split,
            firstEpoch: options.epochs,
            epochs: 1,
            transform: options.transformed.transform,
          }),
          idSet(options.transformed.splitIds),
          options.onEpoch,
          options.transformed.tensorShape,
        )),
      );
    }
    return results;
  } finally {
    client.close();
    await serve.stop();
  }
}

/** Ids packed 16 bytes each, as hex strings. */
function idSet(ids: Buffer): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i < ids.length; i += 16) out.add(ids.toString('hex', i, i + 16));
  return out;
}

/**
 * Consumes a stream, checking each epoch against `expected` (and, given `tensorShape`, each
 * batch's tensor), and reports each epoch's figures as it ends.
 */
async function checkedEpochs(
  batches: AsyncIterable<DecodedBatch>,
  expected: Set<string>,
  onEpoch: (figures: EpochFigures) => void,
  tensorShape?: readonly [number, number, number],
): Promise<EpochFigures[]> {
  const results: EpochFigures[] = [];
  // Made at an epoch's first batch, so that the display's rate leaves the wait before it out.
  let progress: Progress | undefined;
  try {
    let seen = new Set<string>();
    let count = 0;
    let bytes = 0;
    let foreign = 0;
    let tensorsAsAsked = true;
    let started = performance.now();
    for await (const batch of batches) {
      for (let i = 0; i < batch.idBytes.length; i += 16) {
        const id = batch.idBytes.toString('hex', i, i + 16);
        if (!expected.has(id)) foreign++;
        seen.add(id);
      }
      count += batch.samples.length;
      if (tensorShape) {
        const t = batch.tensor;
        const want = [batch.samples.length, ...tensorShape];
        if (
          t === undefined ||
          t.dtype !== 'uint8' ||
          t.shape.length !== want.length ||
          t.shape.some((d, i) => d !== want[i])
        ) {
          tensorsAsAsked = false;
        }
        bytes += t?.data.length ?? 0;
      } else {
        for (const sample of batch.samples) bytes += sample.length;
      }
      progress ??= createProgress(`epoch ${batch.epoch}`, expected.size);
      progress.update(count, bytes);
      if (batch.lastInEpoch) {
        const figures: EpochFigures = {
          epoch: batch.epoch,
          samples: count,
          bytes,
          seconds: (performance.now() - started) / 1000,
          exactlyOnce: foreign === 0 && count === expected.size && seen.size === expected.size,
          ...(tensorShape ? { tensorsAsAsked } : {}),
        };
        progress.stop();
        progress = undefined;
        results.push(figures);
        onEpoch(figures);
        seen = new Set();
        count = 0;
        bytes = 0;
        foreign = 0;
        tensorsAsAsked = true;
        started = performance.now();
      }
    }
  } finally {
    progress?.stop();
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
 * resolves once its ready file names its port. Warnings and errors it logs are
 * passed to `log`; if it exits before serving, the error carries the end of its output.
 */
async function startServe(db: DbConfig, log: (line: string) => void): Promise<ServeChild> {
  const env = serveChildEnv(db);
  const child = spawn(
    process.execPath,
    [...process.execArgv, process.argv[1]!, 'serve', '--host', '127.0.0.1'],
    {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const keep = (text: string): void => {
    output = (output + text).slice(-4000);
  };
  child.stderr!.setEncoding('utf8').on('data', keep);
  child.stdout!.setEncoding('utf8').on('data', keep);
  try {
    const { port: grpcPort, workers } = await waitUntilReady(child, {
      timeoutMs: START_TIMEOUT_MS,
      output: () => output,
      readyFile: env.SCYLLA_LOADER_READY_FILE,
      // pino levels: 40 warn, 50 error, 60 fatal.
      onRecord: (record) => {
        if (Number(record['level']) >= 40) log(`loader: ${String(record['msg'])}`);
      },
    });
    log(
      `loader process ${child.pid} serving on 127.0.0.1:${grpcPort}` +
        (workers > 1 ? ` with ${workers} worker processes (one per core)` : ''),
    );
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
