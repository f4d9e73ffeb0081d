import { spawn } from 'node:child_process';
import type cassandra from 'cassandra-driver';
import { LoaderClient } from '../../src/client/index.js';
import {
  datasetNamespace,
  type DbConfig,
  ingestDataset,
  type IngestSource,
  type ListedSource,
  openIngestFormat,
  sampleId,
} from '../../src/core/index.js';
import { cliMainArgs, packageRoot } from '../../test/support/index.js';
import type { IngestFormats, PayloadRow } from './prepareIngestFormats.js';

/**
 * The ways into a dataset that `bench ingest` compares, side by side: the driver's own
 * unbatched write loop over the rows in memory (the ceiling), `ingest` from files, from
 * WebDataset shards and from Parquet, the IngestSamples call through a loader (the SDK's
 * `ingest()`), and `ingest --workers 2` as a separate command. @internal
 */
export const INGEST_WAYS = [
  'write-loop',
  'folder',
  'webdataset',
  'parquet',
  'rpc',
  'workers',
] as const;

/** One of {@link INGEST_WAYS}. @internal */
export type IngestWay = (typeof INGEST_WAYS)[number];

/** A payload in every form the ways read. @internal */
export interface IngestPayload {
  listed: ListedSource;
  rows: PayloadRow[];
  formats: IngestFormats | undefined;
  /** `ingest` flags naming the files (for the `workers` way). */
  cliSource: string[];
}

/** What one way needs to run. @internal */
export interface WayContext {
  client: cassandra.Client;
  db: DbConfig;
  keyspace: string;
  concurrency: number;
  /** A running loader, for the `rpc` way. */
  loaderAddress?: string;
  onProgress: (done: number, bytes: number) => void;
  signal?: AbortSignal;
}

/** What a way wrote. @internal */
export interface WayResult {
  written: number;
  bytes: number;
}

const SIMPLE_1 = { class: 'SimpleStrategy', replicationFactor: 1 } as const;

/** Runs one way into a keyspace whose tables exist and are empty. @internal */
export async function runIngestWay(
  way: IngestWay,
  payload: IngestPayload,
  ctx: WayContext,
): Promise<WayResult> {
  switch (way) {
    case 'write-loop':
      return writeLoop(payload.rows, ctx);
    case 'folder':
      return viaIngest(payload.listed, ctx);
    case 'webdataset':
    case 'parquet':
      // The way's name is the format's in the registry, as `ingest` opens it.
      return viaIngest(await openIngestFormat(way, formats(payload)[way]), ctx);
    case 'rpc':
      return viaRpc(payload.rows, ctx);
    case 'workers':
      return viaWorkers(payload, ctx);
  }
}

function formats(payload: IngestPayload): IngestFormats {
  if (!payload.formats) throw new Error('the payload was not written as WebDataset and Parquet');
  return payload.formats;
}

/**
 * The ceiling: what the driver does with the same rows when nothing else runs: per sample, its
 * data row and its metadata row as two prepared INSERTs, `concurrency` samples in flight.
 */
async function writeLoop(rows: readonly PayloadRow[], ctx: WayContext): Promise<WayResult> {
  const ns = datasetNamespace(ctx.keyspace);
  const dataInsert = `INSERT INTO ${ctx.keyspace}.samples (id, label, data) VALUES (?, ?, ?)`;
  const metaInsert =
    `INSERT INTO ${ctx.keyspace}.metadata (id, label, source_key, size_bytes) ` +
    'VALUES (?, ?, ?, ?)';
  let next = 0;
  let written = 0;
  let bytes = 0;
  const worker = async (): Promise<void> => {
    while (next < rows.length) {
      ctx.signal?.throwIfAborted();
      const r = rows[next++]!;
      const id = sampleId(r.sourceKey, ns);
      await Promise.all([
        ctx.client.execute(dataInsert, [id, r.label, r.data], { prepare: true }),
        ctx.client.execute(metaInsert, [id, r.label, r.sourceKey, r.data.length], {
          prepare: true,
        }),
      ]);
      written++;
      bytes += r.data.length;
      if (written % 256 === 0) ctx.onProgress(written, bytes);
    }
  };
  await Promise.all(Array.from({ length: Math.min(ctx.concurrency, rows.length) }, worker));
  ctx.onProgress(written, bytes);
  return { written, bytes };
}

async function viaIngest(source: IngestSource, ctx: WayContext): Promise<WayResult> {
  const summary = await ingestDataset(ctx.client, {
    dataset: ctx.keyspace,
    source,
    replication: SIMPLE_1,
    concurrency: ctx.concurrency,
    strict: true,
    // The recount scans the table: the same for every way, and not ingest.
    refreshCounts: false,
    onProgress: (p) => ctx.onProgress(p.done, p.bytesWritten),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  return { written: summary.written, bytes: summary.bytesWritten };
}

async function viaRpc(rows: readonly PayloadRow[], ctx: WayContext): Promise<WayResult> {
  if (!ctx.loaderAddress) throw new Error('the rpc way needs a running loader');
  const client = new LoaderClient(ctx.loaderAddress);
  try {
    const summary = await client.ingest(
      ctx.keyspace,
      rows.map((r) => ({ sourceKey: r.sourceKey, data: r.data, label: r.label })),
      {
        onProgress: (p) => ctx.onProgress(p.acknowledged, 0),
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      },
    );
    return { written: summary.written, bytes: payloadBytes(rows) };
  } finally {
    client.close();
  }
}

/** `ingest --workers 2` as users run it: a command of its own, with its own processes. */
async function viaWorkers(payload: IngestPayload, ctx: WayContext): Promise<WayResult> {
  const args = [
    ...cliMainArgs(),
    'ingest',
    ctx.keyspace,
    ...payload.cliSource,
    '--workers',
    '2',
    '--concurrency',
    String(ctx.concurrency),
    '--strict',
    '--contact-points',
    ctx.db.contactPoints.join(','),
    '--port',
    String(ctx.db.port),
    '--local-dc',
    ctx.db.localDataCenter,
  ];
  const child = spawn(process.execPath, args, {
    cwd: packageRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const m = /written (\d+) \(/.exec(out);
  if (code !== 0 || !m) {
    throw new Error(`ingest --workers 2 ended with exit code ${code}:\n${err}${out}`);
  }
  const written = Number(m[1]);
  const bytes = written === payload.rows.length ? payloadBytes(payload.rows) : 0;
  ctx.onProgress(written, bytes);
  return { written, bytes };
}

function payloadBytes(rows: readonly PayloadRow[]): number {
  return rows.reduce((s, r) => s + r.data.length, 0);
}
