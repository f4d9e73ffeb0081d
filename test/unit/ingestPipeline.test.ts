import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { IngestSamplesRequest__Output } from '../../src/generated/scylla_loader/v1/IngestSamplesRequest.js';
import type { IngestSamplesResponse } from '../../src/generated/scylla_loader/v1/IngestSamplesResponse.js';
import { datasetNamespace, LoaderError, type WritableSample } from '../../src/core/index.js';
import {
  IngestPipeline,
  type IngestPipelineOptions,
} from '../../src/server/ingest/IngestPipeline.js';

/** A request of `n` samples of `size` bytes, keys `r<request>-<i>`. */
function request(index: number, n: number, size = 10): IngestSamplesRequest__Output {
  return {
    target: null,
    samples: Array.from({ length: n }, (_, i) => ({
      sourceKey: `r${index}-${i}`,
      data: Buffer.alloc(size, i),
      label: 0,
      labelBlob: Buffer.alloc(0),
      metadata: {},
    })),
  };
}

/** The requests as the call yields them, counting how many were read. */
function reading(requests: IngestSamplesRequest__Output[]): {
  iterator: AsyncIterator<IngestSamplesRequest__Output>;
  read: () => number;
} {
  let read = 0;
  async function* gen(): AsyncGenerator<IngestSamplesRequest__Output> {
    for (const r of requests) {
      read++;
      yield r;
    }
  }
  return { iterator: gen(), read: () => read };
}

/** A writer whose writes take a random few milliseconds, recording what it wrote and when. */
function fakeWriter(options: { present?: Set<string>; failOn?: string; delayMs?: () => number }) {
  const written: string[] = [];
  let writing = 0;
  let maxWriting = 0;
  let startedAfterStop = 0;
  let stopped = false;
  const writer = {
    exists: (id: string) => Promise.resolve(options.present?.has(id) ?? false),
    write: async (s: WritableSample) => {
      if (stopped) startedAfterStop++;
      writing++;
      maxWriting = Math.max(maxWriting, writing);
      await sleep(options.delayMs?.() ?? Math.random() * 5);
      writing--;
      if (s.sourceKey === options.failOn) throw new Error('write timeout');
      written.push(s.sourceKey);
    },
  };
  return {
    writer,
    written,
    maxWriting: () => maxWriting,
    stop: () => (stopped = true),
    startedAfterStop: () => startedAfterStop,
  };
}

function pipeline(
  writer: IngestPipelineOptions['writer'],
  fields: Partial<IngestPipelineOptions> = {},
): { pipeline: IngestPipeline; responses: IngestSamplesResponse[] } {
  const responses: IngestSamplesResponse[] = [];
  const p = new IngestPipeline({
    writer,
    rules: { columns: new Map(), labelNames: [], namespace: datasetNamespace('t') },
    policy: 'fail',
    signal: new AbortController().signal,
    respond: (r) => {
      responses.push(r);
      return Promise.resolve();
    },
    ...fields,
  });
  return { pipeline: p, responses };
}

describe('IngestPipeline', () => {
  it('answers every request once, in request order, though writes finish out of order', async () => {
    const fake = fakeWriter({});
    const { pipeline: p, responses } = pipeline(fake.writer);
    const requests = Array.from({ length: 20 }, (_, i) => request(i, 1 + (i % 5)));
    await p.run(reading(requests).iterator);
    expect(responses.map((r) => r.acknowledgedRequests)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    const total = requests.reduce((a, r) => a + r.samples.length, 0);
    expect(responses.at(-1)).toMatchObject({ acknowledgedSamples: total, written: total });
    expect(new Set(fake.written).size).toBe(total);
    expect(p.figures).toMatchObject({
      requests: 20,
      samples: total,
      written: total,
      bytes: total * 10,
    });
  });

  it('reads no further while the pending requests hold the most samples or bytes allowed', async () => {
    const fake = fakeWriter({ delayMs: () => 2 });
    const source = reading(Array.from({ length: 30 }, (_, i) => request(i, 10)));
    let answered = 0;
    let mostPending = 0;
    const { pipeline: p } = pipeline(fake.writer, {
      limits: { pendingSamples: 40, pendingBytes: 1 << 30, writesInFlight: 8 },
      respond: () => {
        answered++;
        return Promise.resolve();
      },
    });
    await p.run({
      next: async () => {
        const next = await source.iterator.next();
        mostPending = Math.max(mostPending, source.read() - answered);
        return next;
      },
    });
    // 40 samples are 4 requests of 10: a fifth is read only once one is answered.
    expect(mostPending).toBe(4);
    expect(fake.maxWriting()).toBeLessThanOrEqual(8);
    expect(p.figures.requests).toBe(30);

    // The byte bound alike: 25 bytes pending allow 3 requests of 10 bytes (then over it).
    const bytes = reading(Array.from({ length: 10 }, (_, i) => request(i, 1)));
    answered = 0;
    mostPending = 0;
    const { pipeline: q } = pipeline(fakeWriter({ delayMs: () => 2 }).writer, {
      limits: { pendingSamples: 1000, pendingBytes: 25, writesInFlight: 8 },
      respond: () => {
        answered++;
        return Promise.resolve();
      },
    });
    await q.run({
      next: async () => {
        const next = await bytes.iterator.next();
        mostPending = Math.max(mostPending, bytes.read() - answered);
        return next;
      },
    });
    expect(mostPending).toBe(3);
  });

  it('counts stored samples as present and a key sent twice at once as stored once', async () => {
    const ns = datasetNamespace('t');
    const { sampleId } = await import('../../src/core/index.js');
    const fake = fakeWriter({ present: new Set([sampleId('r0-0', ns)]) });
    const { pipeline: p, responses } = pipeline(fake.writer);
    const twice = request(1, 2);
    twice.samples[1]!.sourceKey = 'r0-1';
    await p.run(reading([request(0, 2), twice]).iterator);
    expect(fake.written.sort()).toEqual(['r0-1', 'r1-0']);
    expect(responses.at(-1)).toMatchObject({
      written: 2,
      alreadyPresent: 2,
      acknowledgedSamples: 4,
    });
  });

  it('under fail, answers the requests before a bad sample, writes none of its request, then fails', async () => {
    const fake = fakeWriter({});
    const { pipeline: p, responses } = pipeline(fake.writer);
    const bad = request(2, 3);
    bad.samples[1]!.data = Buffer.alloc(0);
    const source = reading([request(0, 3), request(1, 3), bad, request(3, 3)]);
    const error = await p.run(source.iterator).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LoaderError);
    expect((error as LoaderError).code).toBe('INVALID_ARGUMENT');
    expect((error as LoaderError).message).toMatch(
      /^sample "r2-1" in request 3 of this call has no data \(0 bytes\); the requests before it are stored/,
    );
    expect(responses.map((r) => r.acknowledgedRequests)).toEqual([1, 2]);
    expect(fake.written.filter((k) => k.startsWith('r2') || k.startsWith('r3'))).toEqual([]);
    expect(source.read()).toBe(3);
  });

  it('under skip, lists bad samples in their request and writes the rest', async () => {
    const fake = fakeWriter({});
    const { pipeline: p, responses } = pipeline(fake.writer, { policy: 'skip' });
    const bad = request(0, 3);
    bad.samples[2]!.label = undefined;
    await p.run(reading([bad, request(1, 1)]).iterator);
    expect(responses[0]).toMatchObject({
      skipped: 1,
      written: 2,
      skippedSamples: [
        {
          sourceKey: 'r0-2',
          reason: expect.stringMatching(
            /^has neither a label nor a label blob, but this call's first sample had one/,
          ) as unknown,
        },
      ],
    });
    expect(responses[1]).toMatchObject({ skipped: 1, written: 3, skippedSamples: [] });
  });

  it('takes an unlabelled call from its first sample, and refuses labels in it', async () => {
    const fake = fakeWriter({});
    const { pipeline: p, responses } = pipeline(fake.writer, { policy: 'skip' });
    const unlabelled = request(0, 3);
    for (const s of unlabelled.samples) s.label = undefined;
    const mixed = request(1, 2);
    mixed.samples[0]!.label = undefined;
    await p.run(reading([unlabelled, mixed]).iterator);
    expect(responses[0]).toMatchObject({ written: 3, skipped: 0 });
    expect(responses[1]).toMatchObject({
      written: 4,
      skipped: 1,
      skippedSamples: [
        {
          sourceKey: 'r1-1',
          reason:
            "has a label or a label blob, but this call's first sample had neither: a call's " +
            'samples are all unlabelled or all labelled (send them in separate calls)',
        },
      ],
    });
  });

  it('after a failed write starts no further sample and rejects with its error', async () => {
    const fake = fakeWriter({ failOn: 'r3-0', delayMs: () => 1 });
    const { pipeline: p } = pipeline(fake.writer, {
      limits: { pendingSamples: 1000, pendingBytes: 1 << 30, writesInFlight: 4 },
    });
    const failure = p.run(reading(Array.from({ length: 40 }, (_, i) => request(i, 4))).iterator);
    await expect(failure).rejects.toThrow('write timeout');
    const after = fake.written.length;
    await sleep(30);
    expect(fake.written.length).toBe(after);
    expect(after).toBeLessThan(160);
  });

  it('after a cancel starts no further write, answers nothing more, and rejects with the reason', async () => {
    const fake = fakeWriter({ delayMs: () => 5 });
    const abort = new AbortController();
    const { pipeline: p, responses } = pipeline(fake.writer, {
      signal: abort.signal,
      limits: { pendingSamples: 1000, pendingBytes: 1 << 30, writesInFlight: 4 },
    });
    async function* endless(): AsyncGenerator<IngestSamplesRequest__Output> {
      for (let i = 0; ; i++) yield request(i, 4);
    }
    const run = p.run(endless());
    await sleep(40);
    abort.abort(new LoaderError('CANCELLED', 'call cancelled'));
    fake.stop();
    const answered = responses.length;
    await expect(run).rejects.toThrow('call cancelled');
    expect(fake.startedAfterStop()).toBe(0);
    expect(responses.length).toBe(answered);
  });
});
