/**
 * The SDK's stream logic (resumption, cancellation, deadline, backpressure, decoding) against
 * small scripted gRPC servers on port 0 that implement LoaderService from the same proto. No
 * database: the scripts stand in for the loader. An integration test all the same: it starts
 * servers, one of them a child process that it SIGKILLs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ClientError,
  LoaderClient,
  type DecodedBatch,
  type ReconnectInfo,
} from '../../src/client/index.js';
import type { LoaderServiceHandlers } from '../../src/proto/index.js';
import type { StreamBatchesRequest__Output } from '../../src/proto/index.js';
import type { StreamBatchesResponse } from '../../src/proto/index.js';
import { loadLoaderProto, protoRoot } from '../../src/testing/index.js';

type Call = grpc.ServerWritableStream<StreamBatchesRequest__Output, StreamBatchesResponse>;
type Script = (call: Call, record: CallRecord) => void | Promise<void>;

/** What the test server saw of one StreamBatches call. */
interface CallRecord {
  request: StreamBatchesRequest__Output;
  /** The request's resume token as text ('' for none). */
  token: string;
  cancelled: boolean;
  finished: boolean;
  /** Write callbacks completed: responses handed to HTTP/2. */
  written: number;
}

interface TestServer {
  address: string;
  port: number;
  calls: CallRecord[];
  server: grpc.Server;
}

const servers: grpc.Server[] = [];
const clients: LoaderClient[] = [];
const children: ChildProcess[] = [];
const PATH = '/scylla_loader.v1.LoaderService/StreamBatches';
const fast = { attempts: 10, initialBackoffMs: 10, maxBackoffMs: 50 };
/** How long a server may take to see a call end: the tests share 2 cores with others. */
const WAIT = { timeout: 5000 };

async function startScriptedServer(script: Script, port = 0): Promise<TestServer> {
  const proto = loadLoaderProto();
  const server = new grpc.Server();
  const calls: CallRecord[] = [];
  const handlers: LoaderServiceHandlers = {
    StreamBatches(call: Call) {
      const record: CallRecord = {
        request: call.request,
        token: call.request.resumeToken.toString(),
        cancelled: false,
        finished: false,
        written: 0,
      };
      calls.push(record);
      call.on('cancelled', () => (record.cancelled = true));
      call.on('finish', () => (record.finished = true));
      void Promise.resolve(script(call, record)).catch((error: unknown) => {
        call.emit('error', { code: grpc.status.INTERNAL, details: String(error) });
      });
    },
    DescribeDataset(call, callback) {
      if (call.request.dataset !== 'mnist') {
        callback({ code: grpc.status.NOT_FOUND, details: `no dataset ${call.request.dataset}` });
        return;
      }
      callback(null, {
        dataset: 'mnist',
        sampleCount: '70000',
        totalBytes: '9000000000',
        labelNames: ['zero', 'one'],
        classCounts: { 0: '6903', '-1': '2' },
        columns: { split: 'text' },
        splits: ['main/train'],
      });
    },
    CreateSplits: (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED }),
    ListSplits: (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED }),
    GetSplit: (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED }),
    GetLedger: (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED }),
    IngestSamples: (call) => call.emit('error', { code: grpc.status.UNIMPLEMENTED }),
  };
  server.addService(proto.scylla_loader.v1.LoaderService.service, handlers);
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    );
  });
  servers.push(server);
  return { address: `127.0.0.1:${bound}`, port: bound, calls, server };
}

function client(address: string, options: ConstructorParameters<typeof LoaderClient>[1] = {}) {
  const c = new LoaderClient(address, { reconnect: fast, ...options });
  clients.push(c);
  return c;
}

/** A well-formed batch of `n` samples of `size` bytes whose resume token is `token`. */
function batch(index: number, token: string, n = 2, size = 3): StreamBatchesResponse {
  const ids = Buffer.alloc(16 * n);
  ids.writeUInt32BE(index, 0);
  return {
    batch: {
      epoch: 0,
      index,
      ids,
      labels: Array.from({ length: n }, (_, i) => i),
      data: Buffer.alloc(n * size, index),
      dataSizes: Array.from({ length: n }, () => size),
      resumeToken: Buffer.from(token),
      lastInEpoch: false,
    },
  };
}

/** Writes and waits for the stream to take more (or to close). */
async function write(call: Call, record: CallRecord, response: StreamBatchesResponse) {
  const more = call.write(response, () => (record.written += 1));
  if (!more && !call.cancelled) {
    await new Promise<void>((resolve) => {
      const done = (): void => {
        call.off('drain', done);
        call.off('close', done);
        resolve();
      };
      call.on('drain', done);
      call.on('close', done);
    });
  }
}

/** Streams batches `from`, `from + 1`, ... with tokens `t<index + 1>` until cancelled. */
async function endless(call: Call, record: CallRecord, from: number, delayMs: number) {
  for (let i = from; !call.cancelled && !call.destroyed; i++) {
    await write(call, record, batch(i, `t${i + 1}`));
    await sleep(delayMs);
  }
}

/** Index after which a token `t<k>` resumes: batch k-1 carried it, so k is next. */
const resumeFrom = (token: string): number => (token === '' ? 0 : Number(token.slice(1)));

async function collect(iterable: AsyncIterable<DecodedBatch>, limit = Infinity) {
  const indices: number[] = [];
  for await (const b of iterable) {
    indices.push(b.index);
    if (indices.length >= limit) break;
  }
  return indices;
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const s of servers.splice(0)) s.forceShutdown();
});

/** Every call the server saw has ended (finished or cancelled): none leaked. */
async function expectNoOpenCalls(calls: CallRecord[]) {
  await vi.waitFor(() => {
    for (const c of calls) expect(c.cancelled || c.finished).toBe(true);
  }, WAIT);
}

describe('LoaderClient.streamBatches: resumption', () => {
  it('resumes after UNAVAILABLE with the last token, every batch once', async () => {
    const { address, calls } = await startScriptedServer(async (call, record) => {
      if (record.token === '') {
        for (let i = 0; i < 3; i++) await write(call, record, batch(i, `t${i + 1}`));
        call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'shutting down' });
      } else if (record.token === 't3') {
        for (let i = 3; i < 6; i++) await write(call, record, batch(i, `t${i + 1}`));
        call.end();
      } else {
        call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'bad token' });
      }
    });
    const reconnects: ReconnectInfo[] = [];
    const batches = client(address).streamBatches(
      { dataset: 'd', split: 'all', batchSize: 2, seed: 7n, epochs: 2, rank: 1, worldSize: 3 },
      { onReconnect: (info) => reconnects.push(info) },
    );
    expect(await collect(batches)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(calls.map((c) => c.token)).toEqual(['', 't3']);
    // The resumed request repeats every field of the first.
    expect({ ...calls[1]?.request, resumeToken: null }).toEqual({
      ...calls[0]?.request,
      resumeToken: null,
    });
    expect(calls[1]?.request).toMatchObject({ seed: '7', epochs: 2, rank: 1, worldSize: 3 });
    expect(reconnects).toEqual([
      expect.objectContaining({
        attempt: 1,
        code: 14,
        codeName: 'UNAVAILABLE',
        details: 'shutting down',
      }),
    ]);
    await expectNoOpenCalls(calls);
  });

  it('sends a skip until the first batch arrives, and not on reconnects after it', async () => {
    let failures = 0;
    const { address, calls } = await startScriptedServer(async (call, record) => {
      if (failures++ === 0) {
        // Refused before any batch: the retry must ask for the same skip again.
        call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'database unreachable' });
      } else if (record.token === 'c') {
        await write(call, record, batch(0, 't1'));
        call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'shutting down' });
      } else {
        await write(call, record, batch(1, 't2'));
        call.end();
      }
    });
    const batches = client(address).streamBatches({
      dataset: 'd',
      split: 'all',
      batchSize: 2,
      jobId: 'run-1',
      resumeToken: Buffer.from('c'),
      skipBatches: { first: 5, last: 9 },
    });
    expect(await collect(batches)).toEqual([0, 1]);
    expect(calls.map((c) => [c.token, c.request.skipBatches])).toEqual([
      ['c', { firstBatch: 5, lastBatch: 9 }],
      ['c', { firstBatch: 5, lastBatch: 9 }],
      ['t1', null],
    ]);
    await expectNoOpenCalls(calls);
  });

  it("starts from the request's own token and reuses it until a batch arrives", async () => {
    let failures = 0;
    const { address, calls } = await startScriptedServer(async (call, record) => {
      if (failures++ < 2) {
        call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'database unreachable' });
        return;
      }
      const from = resumeFrom(record.token);
      for (let i = from; i < from + 2; i++) await write(call, record, batch(i, `t${i + 1}`));
      call.end();
    });
    const batches = client(address).streamBatches({
      dataset: 'd',
      split: 'all',
      batchSize: 2,
      resumeToken: Buffer.from('t10'),
    });
    expect(await collect(batches)).toEqual([10, 11]);
    expect(calls.map((c) => c.token)).toEqual(['t10', 't10', 't10']);
  });

  it('resumes when the server is shut down and restarted on the same port', async () => {
    const script: Script = (call, record) => endless(call, record, resumeFrom(record.token), 5);
    const first = await startScriptedServer(script);
    let second: Promise<TestServer> | undefined;
    const reconnects: ReconnectInfo[] = [];
    const indices: number[] = [];
    const c = client(first.address, { reconnect: { ...fast, attempts: 100 } });
    for await (const b of c.streamBatches(
      { dataset: 'd', split: 'all', batchSize: 2 },
      { onReconnect: (info) => reconnects.push(info) },
    )) {
      indices.push(b.index);
      if (b.index === 4) {
        first.server.forceShutdown();
        // Down for 300 ms, while the client keeps trying.
        second = sleep(300).then(() => startScriptedServer(script, first.port));
      }
      if (b.index === 12) break;
    }
    expect(indices).toEqual(Array.from({ length: 13 }, (_, i) => i));
    // grpc-js reports forceShutdown() as CANCELLED "Call cancelled" (or UNAVAILABLE when it
    // notices the dropped connection first), then UNAVAILABLE while nothing listens.
    expect(['CANCELLED', 'UNAVAILABLE']).toContain(reconnects[0]?.codeName);
    expect(reconnects.length).toBeGreaterThan(1);
    expect(reconnects.slice(1).every((r) => r.codeName === 'UNAVAILABLE')).toBe(true);
    // One call reached the restarted server, resuming after a batch the consumer had seen
    // (batch 4, or one buffered after it); the indices above show nothing was repeated.
    const restarted = await second;
    expect(restarted?.calls).toHaveLength(1);
    expect(resumeFrom(restarted?.calls[0]?.token ?? '')).toBeGreaterThanOrEqual(5);
    await expectNoOpenCalls(restarted?.calls ?? []);
  });

  it('resumes after the server process is killed (SIGKILL) and started again', async () => {
    const first = await spawnServer(0);
    let second: { port: number } | undefined;
    const reconnects: ReconnectInfo[] = [];
    const indices: number[] = [];
    const batches = client(`127.0.0.1:${first.port}`).streamBatches(
      { dataset: 'd', split: 'all', batchSize: 2 },
      { onReconnect: (info) => reconnects.push(info) },
    );
    for await (const b of batches) {
      indices.push(b.index);
      if (b.index === 4) {
        first.child.kill('SIGKILL');
        second = await spawnServer(first.port);
      }
      if (b.index === 15) break;
    }
    expect(second?.port).toBe(first.port);
    expect(indices).toEqual(Array.from({ length: 16 }, (_, i) => i));
    expect(reconnects[0]).toMatchObject({ codeName: 'UNAVAILABLE', details: 'Connection dropped' });
  }, 20_000);

  it('gives up after `attempts` failures in a row without a batch', async () => {
    const { address, calls } = await startScriptedServer((call) => {
      call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'still down' });
    });
    const c = client(address, { reconnect: { ...fast, attempts: 3 } });
    const reconnects: number[] = [];
    const error = await caught(
      collect(
        c.streamBatches(
          { dataset: 'd', split: 'all', batchSize: 1 },
          { onReconnect: (r) => reconnects.push(r.attempt) },
        ),
      ),
    );
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({
      code: grpc.status.UNAVAILABLE,
      details: 'still down',
      path: PATH,
    });
    expect(calls).toHaveLength(4);
    expect(reconnects).toEqual([1, 2, 3]);
  });

  it('counts failures only in a row: a received batch resets them', async () => {
    const { address, calls } = await startScriptedServer(async (call, record) => {
      const from = resumeFrom(record.token);
      await write(call, record, batch(from, `t${from + 1}`));
      if (from === 7) {
        call.end();
      } else {
        call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'flaky' });
      }
    });
    const c = client(address, { reconnect: { ...fast, attempts: 1 } });
    expect(await collect(c.streamBatches({ dataset: 'd', split: 'all', batchSize: 1 }))).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7,
    ]);
    expect(calls).toHaveLength(8);
  });

  it('retries RESOURCE_EXHAUSTED (admission) unless turned off', async () => {
    let rejections = 0;
    const script: Script = async (call, record) => {
      if (rejections++ === 0) {
        call.emit('error', { code: grpc.status.RESOURCE_EXHAUSTED, details: 'too many streams' });
        return;
      }
      await write(call, record, batch(0, 't1'));
      call.end();
    };
    const { address } = await startScriptedServer(script);
    const request = { dataset: 'd', split: 'all', batchSize: 1 };
    expect(await collect(client(address).streamBatches(request))).toEqual([0]);
    rejections = 0;
    const strict = client(address, { reconnect: { ...fast, retryOnResourceExhausted: false } });
    const error = await caught(collect(strict.streamBatches(request)));
    expect(error).toMatchObject({ codeName: 'RESOURCE_EXHAUSTED', details: 'too many streams' });
  });

  it.each([
    [grpc.status.INVALID_ARGUMENT, 'batch_size 0 is out of range [1, 8192]'],
    [grpc.status.NOT_FOUND, 'no split main/train in dataset d'],
    [grpc.status.DATA_LOSS, 'sample 1234 has no row'],
    [grpc.status.INTERNAL, 'internal error'],
  ])('throws status %i as a ClientError without retrying', async (code, details) => {
    const { address, calls } = await startScriptedServer(async (call, record) => {
      await write(call, record, batch(0, 't1'));
      call.emit('error', { code, details });
    });
    const seen: number[] = [];
    const error = await caught(
      (async () => {
        for await (const b of client(address).streamBatches({
          dataset: 'd',
          split: 'all',
          batchSize: 1,
        })) {
          seen.push(b.index);
        }
      })(),
    );
    expect(seen).toEqual([0]);
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ code, details, path: PATH });
    expect((error as ClientError).message).toBe(`${PATH} ${grpc.status[code]}: ${details}`);
    expect(calls).toHaveLength(1);
  });

  it('rejects a batch whose sizes do not add up with DATA_LOSS and cancels the call', async () => {
    const { address, calls } = await startScriptedServer(async (call, record) => {
      const bad = batch(0, 't1');
      bad.batch!.dataSizes = [3, 4];
      await write(call, record, bad);
      await endless(call, record, 1, 5);
    });
    const error = await caught(
      collect(client(address).streamBatches({ dataset: 'd', split: 'all', batchSize: 2 })),
    );
    expect(error).toMatchObject({ codeName: 'DATA_LOSS', path: PATH });
    expect((error as ClientError).details).toMatch(/data sizes add up to more than the 6 bytes/);
    await vi.waitFor(() => expect(calls[0]?.cancelled).toBe(true), WAIT);
    expect(calls).toHaveLength(1);
  });
});

describe('LoaderClient.streamBatches: cancellation and deadline', () => {
  it('ends with the signal reason on abort, and the server sees the cancel', async () => {
    const { address, calls } = await startScriptedServer((call, record) =>
      endless(call, record, 0, 5),
    );
    const controller = new AbortController();
    const seen: number[] = [];
    const error = await caught(
      (async () => {
        for await (const b of client(address).streamBatches(
          { dataset: 'd', split: 'all', batchSize: 2 },
          { signal: controller.signal },
        )) {
          seen.push(b.index);
          if (b.index === 2) {
            await sleep(50); // the client reads ahead meanwhile
            controller.abort();
          }
        }
      })(),
    );
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe('AbortError');
    // Nothing buffered comes out after the abort.
    expect(seen).toEqual([0, 1, 2]);
    await vi.waitFor(() => expect(calls[0]?.cancelled).toBe(true), WAIT);
  });

  it('aborts a stream waiting for a batch, with a custom reason', async () => {
    const { address, calls } = await startScriptedServer(() => undefined);
    const reason = new Error('trainer stopped');
    const signal = AbortSignal.timeout(100);
    const controller = new AbortController();
    signal.addEventListener('abort', () => controller.abort(reason));
    const start = performance.now();
    const error = await caught(
      collect(
        client(address).streamBatches(
          { dataset: 'd', split: 'all', batchSize: 1 },
          { signal: controller.signal },
        ),
      ),
    );
    expect(error).toBe(reason);
    expect(performance.now() - start).toBeLessThan(2000);
    await vi.waitFor(() => expect(calls[0]?.cancelled).toBe(true), WAIT);
  });

  it('aborts during the backoff between attempts', async () => {
    const { address } = await startScriptedServer((call) => {
      call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'down' });
    });
    const c = client(address, {
      reconnect: { attempts: 5, initialBackoffMs: 10_000, maxBackoffMs: 10_000 },
    });
    const controller = new AbortController();
    const reason = new Error('trainer stopped');
    const start = performance.now();
    const error = await caught(
      collect(
        c.streamBatches(
          { dataset: 'd', split: 'all', batchSize: 1 },
          {
            signal: controller.signal,
            onReconnect: () => setTimeout(() => controller.abort(reason), 20),
          },
        ),
      ),
    );
    expect(error).toBe(reason);
    expect(performance.now() - start).toBeLessThan(2000);
  });

  it('does not start a call when the signal has already aborted', async () => {
    const { address, calls } = await startScriptedServer(() => undefined);
    const error = await caught(
      collect(
        client(address).streamBatches(
          { dataset: 'd', split: 'all', batchSize: 1 },
          { signal: AbortSignal.abort() },
        ),
      ),
    );
    expect((error as Error).name).toBe('AbortError');
    expect(calls).toHaveLength(0);
  });

  it('cancels the call when the consumer leaves the loop early', async () => {
    const { address, calls } = await startScriptedServer((call, record) =>
      endless(call, record, 0, 5),
    );
    const batches = client(address).streamBatches({ dataset: 'd', split: 'all', batchSize: 2 });
    expect(await collect(batches, 3)).toEqual([0, 1, 2]);
    await vi.waitFor(() => expect(calls[0]?.cancelled).toBe(true), WAIT);
    expect(calls).toHaveLength(1);
  });

  it('cancels the call when the consumer throws', async () => {
    const { address, calls } = await startScriptedServer((call, record) =>
      endless(call, record, 0, 5),
    );
    const error = await caught(
      (async () => {
        for await (const b of client(address).streamBatches({
          dataset: 'd',
          split: 'all',
          batchSize: 2,
        })) {
          if (b.index === 1) throw new Error('bad batch');
        }
      })(),
    );
    expect((error as Error).message).toBe('bad batch');
    await vi.waitFor(() => expect(calls[0]?.cancelled).toBe(true), WAIT);
  });

  it('fails with DEADLINE_EXCEEDED when the deadline passes', async () => {
    const { address, calls } = await startScriptedServer(async (call, record) => {
      await write(call, record, batch(0, 't1'));
    });
    const seen: number[] = [];
    const error = await caught(
      (async () => {
        for await (const b of client(address).streamBatches(
          { dataset: 'd', split: 'all', batchSize: 1 },
          // Long enough to connect and take batch 0 on a loaded machine; the server then holds
          // the stream, so the deadline is what ends it.
          { deadline: Date.now() + 1500 },
        )) {
          seen.push(b.index);
        }
      })(),
    );
    expect(seen).toEqual([0]);
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ codeName: 'DEADLINE_EXCEEDED', path: PATH });
    await vi.waitFor(() => expect(calls[0]?.cancelled).toBe(true), WAIT);
  });

  it('applies the deadline to the whole stream, not to each attempt', async () => {
    const { address, calls } = await startScriptedServer(async (call, record) => {
      const from = resumeFrom(record.token);
      await write(call, record, batch(from, `t${from + 1}`));
      await sleep(50);
      call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'flaky' });
    });
    const start = performance.now();
    const seen: number[] = [];
    const error = await caught(
      (async () => {
        for await (const b of client(address).streamBatches(
          { dataset: 'd', split: 'all', batchSize: 1 },
          { deadline: new Date(Date.now() + 2000) },
        )) {
          seen.push(b.index);
        }
      })(),
    );
    const elapsed = performance.now() - start;
    expect(error).toMatchObject({ codeName: 'DEADLINE_EXCEEDED' });
    expect(calls.length).toBeGreaterThan(2);
    expect(seen).toEqual(Array.from({ length: seen.length }, (_, i) => i));
    // A deadline per attempt would never end the stream: each call fails after 50 ms.
    expect(elapsed).toBeGreaterThanOrEqual(1950);
    expect(elapsed).toBeLessThan(6000);
  });
});

describe('LoaderClient.streamBatches: backpressure and flow control', () => {
  async function writtenAhead(maxBufferedBatches: number): Promise<number> {
    const size = 256 * 1024;
    const { address, calls } = await startScriptedServer(async (call, record) => {
      for (let i = 0; i < 64 && !call.cancelled; i++) {
        await write(call, record, batch(i, `t${i + 1}`, 1, size));
      }
      call.end();
    });
    const c = client(address, { maxBufferedBatches, flowControlWindow: 65_535 });
    const batches = c.streamBatches({ dataset: 'd', split: 'all', batchSize: 1 });
    const iterator = batches[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.index).toBe(0);
    // The server writes until flow control stops it: wait until it has written nothing more
    // for 200 ms (many window updates on a loaded machine take longer than a fixed sleep).
    let written = -1;
    for (let i = 0; i < 50 && (calls[0]?.written ?? 0) !== written; i++) {
      written = calls[0]?.written ?? 0;
      await sleep(200);
    }
    await iterator.return?.();
    await vi.waitFor(() => expect(calls[0]?.cancelled).toBe(true), WAIT);
    return written;
  }

  it('stops reading when maxBufferedBatches wait for the consumer', async () => {
    const bounded = await writtenAhead(2);
    const wide = await writtenAhead(16);
    // One consumed, a few buffered, one in flight; with the grpc-js default of 16, many more.
    expect(bounded).toBeLessThanOrEqual(6);
    expect(wide).toBeGreaterThanOrEqual(bounded + 10);
  });

  it('sends the flow-control window in its HTTP/2 settings', async () => {
    const sessions: http2.ServerHttp2Session[] = [];
    const settings = new Promise<{ initialWindowSize?: number; connectionWindow?: number }>(
      (resolve) => {
        const raw = http2.createServer();
        raw.on('session', (session) => {
          sessions.push(session);
          session.on('remoteSettings', (s) => {
            // The connection window grows by a WINDOW_UPDATE sent right after the settings.
            setTimeout(() => {
              resolve({
                initialWindowSize: s.initialWindowSize,
                connectionWindow: session.state.remoteWindowSize,
              });
            }, 50);
          });
        });
        raw.on('stream', (stream) =>
          stream.respond({ ':status': 200, 'content-type': 'application/grpc' }),
        );
        raw.listen(0, '127.0.0.1', () => {
          const { port } = raw.address() as AddressInfo;
          const c = client(`127.0.0.1:${port}`, { flowControlWindow: 8 * 1024 * 1024 });
          const controller = new AbortController();
          void collect(
            c.streamBatches(
              { dataset: 'd', split: 'all', batchSize: 1 },
              { signal: controller.signal },
            ),
          ).catch(() => undefined);
          void settings.finally(() => {
            controller.abort();
            for (const s of sessions) s.destroy();
            raw.close();
          });
        });
      },
    );
    const seen = await settings;
    expect(seen.initialWindowSize).toBe(8 * 1024 * 1024);
    expect(seen.connectionWindow).toBeGreaterThanOrEqual(8 * 1024 * 1024 - 65_535);
  });
});

describe('LoaderClient.describeDataset', () => {
  it('returns a plain object with numbers', async () => {
    const { address } = await startScriptedServer(() => undefined);
    expect(await client(address).describeDataset('mnist')).toEqual({
      dataset: 'mnist',
      sampleCount: 70000,
      totalBytes: 9_000_000_000,
      labelNames: ['zero', 'one'],
      classCounts: { 0: 6903, [-1]: 2 },
      columns: { split: 'text' },
      splits: ['main/train'],
    });
  });

  it('throws a ClientError with the method path', async () => {
    const { address } = await startScriptedServer(() => undefined);
    const error = await caught(client(address).describeDataset('nope'));
    expect(error).toBeInstanceOf(ClientError);
    expect((error as ClientError).message).toBe(
      '/scylla_loader.v1.LoaderService/DescribeDataset NOT_FOUND: no dataset nope',
    );
  });

  it('rejects with the signal reason on abort', async () => {
    const error = await caught(
      client('127.0.0.1:1').describeDataset('mnist', { signal: AbortSignal.abort() }),
    );
    expect((error as Error).name).toBe('AbortError');
  });
});

/**
 * Starts the scripted endless server in a child process (so it can be SIGKILLed), on `port`
 * (0: any), and resolves once it listens.
 */
async function spawnServer(port: number): Promise<{ child: ChildProcess; port: number }> {
  const script = `
    import * as grpc from '@grpc/grpc-js';
    import * as loader from '@grpc/proto-loader';
    const def = loader.loadSync('scylla_loader/v1/loader.proto', {
      keepCase: false, longs: String, enums: String, bytes: Buffer, defaults: true, oneofs: true,
      includeDirs: [${JSON.stringify(protoRoot())}],
    });
    const pkg = grpc.loadPackageDefinition(def).scylla_loader.v1;
    const server = new grpc.Server();
    server.addService(pkg.LoaderService.service, {
      StreamBatches(call) {
        const token = call.request.resumeToken.toString();
        let i = token === '' ? 0 : Number(token.slice(1));
        const timer = setInterval(() => {
          const ids = Buffer.alloc(16);
          call.write({ batch: { index: i, ids, labels: [0], data: Buffer.alloc(3), dataSizes: [3],
            resumeToken: Buffer.from('t' + (i + 1)) } });
          i++;
        }, 10);
        call.on('cancelled', () => clearInterval(timer));
      },
    });
    server.bindAsync('127.0.0.1:${port}', grpc.ServerCredentials.createInsecure(), (e, p) => {
      if (e) throw e;
      process.stdout.write(p + '\\n');
    });
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const bound = await new Promise<number>((resolve, reject) => {
    child.stdout?.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    child.once('exit', (code) => reject(new Error(`test server exited with ${code}`)));
  });
  return { child, port: bound };
}
