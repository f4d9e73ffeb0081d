import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoaderServer } from '../../src/server/index.js';
import { createDbClient } from '../../src/core/index.js';
import { ingestSmallDataset } from '../support/smallDataset.js';
import { toolPath } from '../support/toolPath.js';
import { startTestServer } from '../support/loaderServer.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

// grpcurl (scripts/tools/grpcurl.sh) is a client that knows nothing of this project: it is run
// with no .proto files, from an empty folder, so everything it knows comes from reflection.

const N = 60;
const CLASSES = 3;
let db: cassandra.Client;
let ks: string;
let server: LoaderServer;
let grpcurlBin: string;
let emptyDir: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs grpcurl against the loader; `data` goes in as the JSON request (`-d`). */
function grpcurl(args: string[], data?: unknown): Promise<Run> {
  const full = ['-plaintext', '-max-time', '60'];
  if (data !== undefined) full.push('-d', JSON.stringify(data));
  full.push(`127.0.0.1:${server.port}`, ...args);
  return new Promise((resolve) => {
    execFile(grpcurlBin, full, { cwd: emptyDir, maxBuffer: 64 * 1024 * 1024 }, (err, out, e) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout: out, stderr: e }),
    );
  });
}

/** grpcurl's output, which must have succeeded. */
async function ok(args: string[], data?: unknown): Promise<string> {
  const run = await grpcurl(args, data);
  expect(run.stderr, `grpcurl ${args.join(' ')}`).toBe('');
  expect(run.code).toBe(0);
  return run.stdout;
}

/** The JSON messages grpcurl printed: pretty objects one after another, each from column 0. */
function messages(stdout: string): Record<string, unknown>[] {
  const text = stdout.trim();
  return text === '' ? [] : (JSON.parse(`[${text.replace(/\n\}\n\{/g, '\n},\n{')}]`) as never);
}

async function call(method: string, data: unknown): Promise<Record<string, unknown>> {
  const out = messages(await ok([method], data));
  expect(out).toHaveLength(1);
  return out[0]!;
}

beforeAll(async () => {
  grpcurlBin = toolPath('grpcurl');
  emptyDir = await mkdtemp(path.join(os.tmpdir(), 'sl-grpcurl-'));
  db = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  await ingestSmallDataset(db, ks, N, CLASSES);
  server = await startTestServer();
});

afterAll(async () => {
  await server?.shutdown();
  if (ks) await dropKeyspace(db, ks);
  await db?.shutdown();
});

describe('server reflection, as grpcurl sees it with no proto files', () => {
  it('lists the loader and health services and their methods', async () => {
    const services = (await ok(['list'])).trim().split('\n');
    expect(services).toEqual(
      expect.arrayContaining(['scylla_loader.v1.LoaderService', 'grpc.health.v1.Health']),
    );
    const methods = (await ok(['list', 'scylla_loader.v1.LoaderService'])).trim().split('\n');
    expect(methods.sort()).toEqual(
      [
        'CreateSplits',
        'DescribeDataset',
        'GetLedger',
        'GetSplit',
        'IngestSamples',
        'ListSplits',
        'StreamBatches',
      ].map((m) => `scylla_loader.v1.LoaderService.${m}`),
    );
  });

  it('describes the service with its methods, streaming and comments', async () => {
    const text = await ok(['describe', 'scylla_loader.v1.LoaderService']);
    expect(text).toContain('scylla_loader.v1.LoaderService is a service:');
    expect(text).toContain(
      'rpc StreamBatches ( .scylla_loader.v1.StreamBatchesRequest ) returns ' +
        '( stream .scylla_loader.v1.StreamBatchesResponse );',
    );
    expect(text).toContain(
      'rpc ListSplits ( .scylla_loader.v1.ListSplitsRequest ) returns ' +
        '( .scylla_loader.v1.ListSplitsResponse );',
    );
    // Source info is served too, so the proto's comments come along.
    expect(text).toContain('// Streams ready-made training batches');
  });

  it('describes messages with their original field names, imports and map entries', async () => {
    const splitSet = await ok(['describe', 'scylla_loader.v1.SplitSet']);
    expect(splitSet).toContain('.google.protobuf.Timestamp created_at = 9;');
    expect(splitSet).toContain('string content_hash = 7;');
    const timestamp = await ok(['describe', 'google.protobuf.Timestamp']);
    expect(timestamp).toContain('int64 seconds = 1;');
    const described = await ok(['describe', 'scylla_loader.v1.DescribeDatasetResponse']);
    expect(described).toContain('map<sint32, uint64> class_counts = 5;');
    expect(described).toContain('map<string, string> columns = 6;');
    const range = await ok(['describe', 'scylla_loader.v1.NumericRange']);
    expect(range).toContain('optional double min = 1;');
    const list = await ok(['describe', 'grpc.health.v1.HealthListResponse']);
    expect(list).toContain('map<string, .grpc.health.v1.HealthCheckResponse> statuses = 1;');
  });

  it('describes every method of every service and every message they reach', async () => {
    const services = (await ok(['list'])).trim().split('\n');
    const seen = new Set<string>();
    const pending: string[] = [];
    const visit = (text: string): void => {
      for (const [, name] of text.matchAll(/(?<![\w.])\.((?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*)/g)) {
        if (!seen.has(name!)) {
          seen.add(name!);
          pending.push(name!);
        }
      }
    };
    for (const service of services.filter((s) => !s.startsWith('grpc.reflection.'))) {
      for (const method of (await ok(['list', service])).trim().split('\n')) {
        const text = await ok(['describe', method]);
        expect(text).toContain(`${method} is a method:`);
        visit(text);
      }
    }
    while (pending.length > 0) {
      const name = pending.pop()!;
      const text = await ok(['describe', name]);
      expect(text).toMatch(new RegExp(`^${name.replaceAll('.', '\\.')} is an? (message|enum)`));
      visit(text.slice(text.indexOf('\n')));
    }
    for (const name of [
      'scylla_loader.v1.SplitSet',
      'scylla_loader.v1.MetadataFilter',
      'scylla_loader.v1.ShardRule',
      'google.protobuf.Timestamp',
      'grpc.health.v1.HealthCheckResponse',
    ]) {
      expect([...seen]).toContain(name);
    }
  });

  it('calls DescribeDataset with JSON and gets the dataset back', async () => {
    const res = await call('scylla_loader.v1.LoaderService/DescribeDataset', { dataset: ks });
    expect(res['dataset']).toBe(ks);
    expect(res['sampleCount']).toBe(String(N));
    const counts = res['classCounts'] as Record<string, string>;
    expect(Object.keys(counts).sort()).toEqual(['0', '1', '2']);
    expect(Object.values(counts).reduce((a, c) => a + Number(c), 0)).toBe(N);
    expect(Number(res['totalBytes'])).toBeGreaterThanOrEqual(N * 100);
  });

  it('calls CreateSplits, ListSplits and GetSplit; StreamBatches streams the part', async () => {
    // snake_case input: the original field names are what reflection serves.
    const created = await call('scylla_loader.v1.LoaderService/CreateSplits', {
      dataset: ks,
      name: 'holdout',
      parts: [
        { name: 'train', weight: 0.75 },
        { name: 'val', weight: 0.25 },
      ],
      seed: '7',
      allow_shortfall: true,
    });
    const set = created['splitSet'] as Record<string, unknown>;
    expect(set).toMatchObject({ name: 'holdout', version: 1, seed: '7' });
    const createdAt = Date.parse(set['createdAt'] as string);
    expect(Math.abs(createdAt - Date.now())).toBeLessThan(5 * 60_000);
    const parts = set['parts'] as { name: string; size: string }[];
    expect(parts.map((p) => p.name)).toEqual(['train', 'val']);
    expect(parts.reduce((a, p) => a + Number(p.size), 0)).toBe(N);

    const listed = await call('scylla_loader.v1.LoaderService/ListSplits', { dataset: ks });
    const sets = listed['splitSets'] as Record<string, unknown>[];
    expect(sets.map((s) => s['name'])).toEqual(['holdout']);
    expect(sets[0]!['contentHash']).toBe(set['contentHash']);
    expect(sets[0]!['createdAt']).toBe(set['createdAt']);

    const got = await call('scylla_loader.v1.LoaderService/GetSplit', {
      dataset: ks,
      name: 'holdout',
    });
    expect(got['splitSet']).toEqual(set);

    const valSize = Number(parts[1]!.size);
    const batches = messages(
      await ok(['scylla_loader.v1.LoaderService/StreamBatches'], {
        dataset: ks,
        split: 'holdout/val',
        batch_size: 4,
        seed: '3',
        ordering: 'ORDERING_IN_ORDER',
      }),
    ).map((m) => m['batch'] as Record<string, unknown>);
    expect(batches).toHaveLength(Math.ceil(valSize / 4));
    let samples = 0;
    for (const b of batches) {
      const labels = b['labels'] as number[];
      const sizes = b['dataSizes'] as number[];
      const data = Buffer.from(b['data'] as string, 'base64');
      expect(sizes).toHaveLength(labels.length);
      expect(data.length).toBe(sizes.reduce((a, s) => a + s, 0));
      expect(data.subarray(0, 7).toString()).toBe('sample-');
      for (const l of labels) expect(l).toBeLessThan(CLASSES);
      samples += labels.length;
    }
    expect(samples).toBe(valSize);
    expect(batches.at(-1)!['lastInEpoch']).toBe(true);
  });

  it('calls the health Check: SERVING for the server and the loader service', async () => {
    expect(await call('grpc.health.v1.Health/Check', {})).toEqual({ status: 'SERVING' });
    expect(
      await call('grpc.health.v1.Health/Check', { service: 'scylla_loader.v1.LoaderService' }),
    ).toEqual({ status: 'SERVING' });
  });

  it('a bad request gets its gRPC code and message', async () => {
    const run = await grpcurl(['scylla_loader.v1.LoaderService/DescribeDataset'], {
      dataset: 'no_such_dataset',
    });
    // grpcurl exits with 64 + the status code: NOT_FOUND is 5.
    expect(run.code).toBe(64 + 5);
    expect(run.stderr).toContain('Code: NotFound');
    expect(run.stderr).toContain('dataset "no_such_dataset" does not exist; ingest it first');
  });
});
