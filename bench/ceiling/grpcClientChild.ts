/**
 * Child process of `bench ceiling`: the SDK (`LoaderClient`) consuming the gRPC server child's
 * batches, touching each sample's length; a short untimed warm-up call first. @internal
 */
import { LoaderClient, type StreamBatchesOptions } from '../../src/client/index.js';
import { runBenchChild } from '../stream/childProtocol.js';

/** Settings of the gRPC client child. @internal */
export interface GrpcClientChildConfig {
  address: string;
  batchSize: number;
  /** The client's HTTP/2 window; absent: the SDK's default (64 MiB). */
  flowControlWindow?: number;
}

/** What the client child measured (the stream children report the same). @internal */
export interface CeilingClientResult {
  bytes: number;
  batches: number;
  wallSeconds: number;
}

runBenchChild<GrpcClientChildConfig, CeilingClientResult>(async (config, ready) => {
  const client = new LoaderClient(
    config.address,
    config.flowControlWindow === undefined ? {} : { flowControlWindow: config.flowControlWindow },
  );
  try {
    const request = (dataset: string): StreamBatchesOptions => ({
      dataset,
      split: 'all',
      batchSize: config.batchSize,
      epochs: 1,
    });
    for await (const batch of client.streamBatches(request('warmup'))) void batch;
    await ready();
    let bytes = 0;
    let batches = 0;
    const t0 = performance.now();
    for await (const batch of client.streamBatches(request('measured'))) {
      for (const sample of batch.samples) bytes += sample.length;
      batches++;
    }
    return { bytes, batches, wallSeconds: (performance.now() - t0) / 1000 };
  } finally {
    client.close();
  }
});
