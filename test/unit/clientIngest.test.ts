import { describe, expect, it } from 'vitest';
import { ClientError } from '../../src/client/ClientError.js';
import type { IngestSampleInput, SkippedSampleInfo } from '../../src/client/IngestOptions.js';
import { inferColumns } from '../../src/client/inferColumns.js';
import {
  IngestRequestSource,
  REQUEST_BYTES,
  type PreparedRequest,
} from '../../src/client/IngestRequestSource.js';
import { toProtoSample } from '../../src/client/toProtoSample.js';
import { MAX_SAMPLE_BYTES } from '../../src/core/requests.js';

const PATH = '/scylla_loader.v1.LoaderService/IngestSamples';

function sampleOf(i: number, size = 10): IngestSampleInput {
  return { sourceKey: `k${i}`, data: new Uint8Array(size), label: 0 };
}

async function requestsOf(
  samples: Iterable<IngestSampleInput> | AsyncIterable<IngestSampleInput>,
  samplesPerRequest = 64,
  policy: 'fail' | 'skip' = 'fail',
): Promise<{ requests: PreparedRequest[]; skips: SkippedSampleInfo[] }> {
  const skips: SkippedSampleInfo[] = [];
  const source = new IngestRequestSource(samples, {
    samplesPerRequest,
    policy,
    path: PATH,
    onLocalSkip: (s) => skips.push(s),
  });
  const requests: PreparedRequest[] = [];
  for (let r = await source.next(); r !== undefined; r = await source.next()) requests.push(r);
  return { requests, skips };
}

describe('toProtoSample', () => {
  it('maps metadata values to the proto kinds, leaving nulls out, without copying bytes', () => {
    const data = new Uint8Array([1, 2, 3]);
    const { sample, sampleBytes } = toProtoSample(
      {
        sourceKey: 'a',
        data,
        labelBlob: new Uint8Array(2),
        metadata: { t: 'x', b: true, i: 7, neg: -3, big: 2n ** 40n, d: 0.5, n: null, huge: 1e20 },
      },
      0,
    );
    expect(sample.data).toBe(data);
    expect(sampleBytes).toBe(5);
    expect(sample.metadata).toEqual({
      t: { text: 'x' },
      b: { boolean: true },
      i: { int: '7' },
      neg: { int: '-3' },
      big: { int: '1099511627776' },
      d: { double: 0.5 },
      huge: { double: 1e20 },
    });
    expect('label' in sample).toBe(false);
  });

  it('throws a TypeError naming the sample for a value of the wrong type', () => {
    expect(() => toProtoSample({ sourceKey: 'a', data: 'x' } as never, 3)).toThrow(
      new TypeError('sample 3 ("a"): data must be a Uint8Array'),
    );
    expect(() => toProtoSample({ data: new Uint8Array(1) } as never, 0)).toThrow(
      /sample 0: sourceKey must be a string/,
    );
    expect(() => toProtoSample({ ...sampleOf(0), label: 1.5 }, 1)).toThrow(
      /label must be an integer, got 1.5/,
    );
    expect(() => toProtoSample({ ...sampleOf(0), metadata: { x: {} as never } }, 2)).toThrow(
      /metadata "x" must be a string, number, bigint, boolean or null/,
    );
  });
});

describe('inferColumns', () => {
  it('types each key by its first value that is not null', () => {
    expect(
      inferColumns([
        { ...sampleOf(0), metadata: { a: null, b: 3, c: 'x' } },
        { ...sampleOf(1), metadata: { a: 1.5, b: 2.5, d: true, e: 5n } },
        { ...sampleOf(2), metadata: { z: null } },
      ]),
    ).toEqual({ a: 'double', b: 'bigint', c: 'text', d: 'boolean', e: 'bigint' });
    expect(inferColumns([])).toEqual({});
  });
});

describe('IngestRequestSource', () => {
  it('fills requests up to samplesPerRequest, from sync and async iterables', async () => {
    const sync = await requestsOf(
      Array.from({ length: 150 }, (_, i) => sampleOf(i)),
      64,
    );
    expect(sync.requests.map((r) => r.samples.length)).toEqual([64, 64, 22]);
    async function* gen(): AsyncGenerator<IngestSampleInput> {
      for (let i = 0; i < 10; i++) yield sampleOf(i);
    }
    const asyncRequests = await requestsOf(gen(), 4);
    expect(asyncRequests.requests.map((r) => r.samples.map((s) => s.sourceKey))).toEqual([
      ['k0', 'k1', 'k2', 'k3'],
      ['k4', 'k5', 'k6', 'k7'],
      ['k8', 'k9'],
    ]);
  });

  it('stops a request short of 4 MiB and sends a larger sample alone', async () => {
    const mib = 1024 * 1024;
    const sizes = [mib, mib, mib, mib, 5 * mib, 10, 10];
    const { requests } = await requestsOf(sizes.map((size, i) => sampleOf(i, size)));
    expect(requests.map((r) => r.samples.map((s) => s.sourceKey))).toEqual([
      ['k0', 'k1', 'k2'],
      ['k3'],
      ['k4'],
      ['k5', 'k6'],
    ]);
    for (const r of requests.filter((r) => r.samples.length > 1)) {
      const bytes = r.samples.reduce((a, s) => a + (s.data as Uint8Array).length, 0);
      expect(bytes).toBeLessThanOrEqual(REQUEST_BYTES);
    }
  });

  it('judges a sample too large for any request itself: skipped, or INVALID_ARGUMENT', async () => {
    const huge = { sourceKey: 'huge', data: new Uint8Array(31 * 1024 * 1024), label: 0 };
    const over = 31 * 1024 * 1024;
    const skip = await requestsOf([sampleOf(0), huge, sampleOf(1)], 64, 'skip');
    expect(skip.requests.map((r) => r.samples.map((s) => s.sourceKey))).toEqual([['k0', 'k1']]);
    expect(skip.skips).toEqual([
      {
        sourceKey: 'huge',
        reason: expect.stringMatching(
          new RegExp(
            `^is ${over} bytes with its label blob, over the limit of ${MAX_SAMPLE_BYTES}`,
          ),
        ),
      },
    ]);
    const error = await requestsOf([sampleOf(0), huge], 64, 'fail').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({
      codeName: 'INVALID_ARGUMENT',
      details: expect.stringMatching(/^sample "huge" is \d+ bytes .*found by the client/),
    });
  });

  it('reads the samples only as far as the next request needs', async () => {
    let read = 0;
    function* counted(): Generator<IngestSampleInput> {
      for (let i = 0; i < 100; i++) {
        read++;
        yield sampleOf(i);
      }
    }
    const source = new IngestRequestSource(counted(), {
      samplesPerRequest: 10,
      policy: 'fail',
      path: PATH,
      onLocalSkip: () => undefined,
    });
    await source.next();
    expect(read).toBe(10);
    await source.next();
    expect(read).toBe(20);
    source.close();
  });
});
