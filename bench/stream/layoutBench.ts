import { randomBytes } from 'node:crypto';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { decodeBatch } from '../../src/testing/index.js';
import {
  loaderPackageDefinition,
  PROTO_OPTIONS,
  type StreamBatchesResponse,
  type StreamBatchesResponse__Output,
} from '../../src/proto/index.js';
import type { AssembledBatch } from '../../src/core/index.js';
import { buildBatchResponse } from '../../src/server/index.js';
import { median } from './stats.js';

/**
 * The two candidate layouts of the issue, as small messages of their own, plus a service so
 * that proto-loader makes the same serializers grpc-js uses (`fromObject` + `encode`, `decode`
 * + `toObject` with the project's options).
 */
const LAYOUT_PROTO: Parameters<typeof protoLoader.fromJSON>[0] = {
  nested: {
    layoutbench: {
      nested: {
        PackedBatch: {
          fields: {
            data: { type: 'bytes', id: 1 },
            sizes: { rule: 'repeated', type: 'uint32', id: 2 },
          },
        },
        RepeatedBatch: { fields: { samples: { rule: 'repeated', type: 'bytes', id: 1 } } },
        Layouts: {
          methods: {
            Packed: { requestType: 'PackedBatch', responseType: 'PackedBatch', comment: '' },
            Repeated: { requestType: 'RepeatedBatch', responseType: 'RepeatedBatch', comment: '' },
          },
        },
      },
    },
  },
};

interface Codec {
  layout: string;
  description: string;
  encode(samples: Buffer[]): Buffer;
  /** Decodes and returns the samples' total length (every sample view touched). */
  decode(message: Buffer): number;
}

/**
 * Encodes and decodes a batch of `samples` random samples of about `sampleBytes` (±10%) in
 * each layout, `iterations` times interleaved, and reports median times: `bytes data +
 * repeated uint32 sizes` (the encode includes concatenating the samples, the decode cutting
 * the views), `repeated bytes samples`, and for reference the project's own
 * `StreamBatchesResponse` as the server builds it and the SDK decodes it.
 */
export function runLayoutBench(
  options: { samples?: number; sampleBytes?: number; iterations?: number } = {},
) {
  const n = options.samples ?? 128;
  const size = options.sampleBytes ?? 100_000;
  const iterations = options.iterations ?? 50;
  const samples = Array.from({ length: n }, (_, i) =>
    randomBytes(Math.round(size * (0.9 + (0.2 * i) / Math.max(n - 1, 1)))),
  );
  const payload = samples.reduce((a, s) => a + s.length, 0);
  const codecs = makeCodecs();
  const times = codecs.map(() => ({ encode: [] as number[], decode: [] as number[], bytes: 0 }));
  // Untimed rounds warm up the JIT; then the layouts alternate, each round starting with the
  // next one, so allocator and GC noise (large fresh buffers dominate here) hit all alike.
  for (let it = -5; it < iterations; it++) {
    for (let k = 0; k < codecs.length; k++) {
      const c = (k + Math.max(it, 0)) % codecs.length;
      const codec = codecs[c]!;
      const t0 = performance.now();
      const message = codec.encode(samples);
      const t1 = performance.now();
      const decoded = codec.decode(message);
      const t2 = performance.now();
      if (decoded !== payload) {
        throw new Error(`${codec.layout}: decoded ${decoded} bytes, expected ${payload}`);
      }
      if (it < 0) continue;
      times[c]!.encode.push(t1 - t0);
      times[c]!.decode.push(t2 - t1);
      times[c]!.bytes = message.length;
    }
  }
  const results = codecs.map((codec, c) => {
    const encodeMs = median(times[c]!.encode);
    const decodeMs = median(times[c]!.decode);
    return {
      layout: codec.layout,
      description: codec.description,
      messageBytes: times[c]!.bytes,
      encodeMs,
      decodeMs,
      encodeMinMs: Math.min(...times[c]!.encode),
      decodeMinMs: Math.min(...times[c]!.decode),
      encodeGBps: payload / 1e6 / encodeMs,
      decodeGBps: payload / 1e6 / decodeMs,
    };
  });
  const total = (layout: string, min = false): number => {
    const r = results.find((x) => x.layout === layout)!;
    return min ? r.encodeMinMs + r.decodeMinMs : r.encodeMs + r.decodeMs;
  };
  return {
    samples: n,
    meanSampleBytes: payload / n,
    payloadBytes: payload,
    iterations,
    results,
    faster: total('packed') <= total('repeated') ? 'packed' : 'repeated',
    // By the fastest times: the copies each layout needs, without allocator and GC noise.
    fasterByMin: total('packed', true) <= total('repeated', true) ? 'packed' : 'repeated',
  };
}

function makeCodecs(): Codec[] {
  const layouts = protoLoader.fromJSON(LAYOUT_PROTO, PROTO_OPTIONS)[
    'layoutbench.Layouts'
  ] as ServiceDefinition;
  const packed = layouts['Packed'] as MethodDefinition<
    { data: Buffer; sizes: number[] },
    { data: Buffer; sizes: number[] }
  >;
  const repeated = layouts['Repeated'] as MethodDefinition<
    { samples: Buffer[] },
    { samples: Buffer[] }
  >;
  const loader = loaderPackageDefinition()['scylla_loader.v1.LoaderService'] as ServiceDefinition;
  const stream = loader['StreamBatches'] as MethodDefinition<unknown, StreamBatchesResponse>;
  const token = randomBytes(60);
  return [
    {
      layout: 'packed',
      description: 'bytes data + repeated uint32 sizes',
      encode: (samples) =>
        packed.responseSerialize({
          data: Buffer.concat(samples),
          sizes: samples.map((s) => s.length),
        }),
      decode: (message) => {
        const { data, sizes } = packed.responseDeserialize(message);
        let offset = 0;
        let total = 0;
        for (const size of sizes) {
          total += data.subarray(offset, offset + size).length;
          offset += size;
        }
        return total;
      },
    },
    {
      layout: 'repeated',
      description: 'repeated bytes samples',
      encode: (samples) => repeated.responseSerialize({ samples }),
      decode: (message) =>
        repeated.responseDeserialize(message).samples.reduce((a, s) => a + s.length, 0),
    },
    {
      layout: 'project',
      description: "the project's Batch (packed, with ids, labels, token), SDK decode",
      encode: (samples) =>
        stream.responseSerialize(
          buildBatchResponse(assembled(samples), token, 2 ** 31 - 1).response,
        ),
      decode: (message) =>
        decodeBatch(
          (stream.responseDeserialize(message) as StreamBatchesResponse__Output).batch,
          'bench',
        ).samples.reduce((a, s) => a + s.length, 0),
    },
  ];
}

function assembled(samples: Buffer[]): AssembledBatch {
  return {
    epoch: 0,
    index: 0,
    samples: samples.map((data, position) => ({
      position,
      id: randomBytes(16),
      source: 0,
      label: position % 4,
      labelBlob: null,
      data,
    })),
    skippedMissing: 0,
    skippedUndecodable: 0,
    lastInEpoch: false,
    resume: { epoch: 0, low: 0, deliveredAbove: [], nextBatchIndex: 1 },
    firstArrivalAt: 0,
  };
}
