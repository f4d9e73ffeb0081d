/**
 * Child process of `bench ceiling`: the real loader server (`createLoaderServer`, its options,
 * admission and pre-encoded serializer) with a StreamBatches handler that serves one batch,
 * encoded once, from memory: `batches` times for a call on dataset `measured`,
 * `warmupBatches` times for any other, awaiting each write's callback (backpressure). The
 * database connection `createLoaderServer` opens is never read from. Reports once the
 * measured call has ended. @internal
 */
import type * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { createLoaderServer, serverConfigSchema } from '../../src/server/index.js';
import type { DbConfig } from '../../src/core/index.js';
import type { StreamBatchesRequest__Output, StreamBatchesResponse } from '../../src/proto/index.js';
import { runBenchChild } from '../stream/childProtocol.js';
import { encodeCeilingBatch, type CeilingBatchShape } from './ceilingBatch.js';

/** Settings of the gRPC server child. @internal */
export interface GrpcServerChildConfig extends CeilingBatchShape {
  db: DbConfig;
  port: number;
  batches: number;
  warmupBatches: number;
  /**
   * Write a copy of the batch without the frame header in front, so grpc-js frames it by
   * copying it into a new buffer per write, as every batch was before `allocFramedMessage`.
   */
  framingCopy?: boolean;
}

/** What the gRPC server child reports. @internal */
export interface GrpcServerChildResult {
  batchesWritten: number;
  messageBytes: number;
}

runBenchChild<GrpcServerChildConfig, GrpcServerChildResult>(async (config, ready) => {
  const encoded = encodeCeilingBatch(config).message;
  const message = config.framingCopy ? Buffer.from(encoded) : encoded;
  let onMeasuredDone!: (n: number) => void;
  let onFail!: (e: Error) => void;
  const measuredDone = new Promise<number>((resolve, reject) => {
    onMeasuredDone = resolve;
    onFail = reject;
  });
  const handler =
    (): grpc.handleServerStreamingCall<StreamBatchesRequest__Output, StreamBatchesResponse> =>
    (call) => {
      const measured = call.request.dataset === 'measured';
      const count = measured ? config.batches : config.warmupBatches;
      void (async () => {
        let written = 0;
        try {
          for (; written < count && !call.cancelled; written++) {
            await new Promise<void>((resolve, reject) =>
              // The serializer passes a Buffer through as the message's bytes.
              call.write(message as unknown as StreamBatchesResponse, (err?: Error | null) =>
                err ? reject(err) : resolve(),
              ),
            );
          }
          call.end();
          if (measured) onMeasuredDone(written);
        } catch (err) {
          call.destroy(err as Error);
          if (measured) onFail(err as Error);
        }
      })();
    };
  const server = await createLoaderServer(
    serverConfigSchema.parse({
      db: { ...config.db, connectionsPerHost: 1 },
      host: '127.0.0.1',
      port: config.port,
      metricsPort: 0,
      resumeKey: 'ab'.repeat(32),
      // Lets the measured call's trailers go out before the server stops.
      shutdownGraceMs: 5_000,
    }),
    { logger: pino({ level: 'silent' }), streamBatchesHandler: handler },
  );
  try {
    await ready();
    const batchesWritten = await measuredDone;
    return { batchesWritten, messageBytes: message.length };
  } finally {
    await server.shutdown('bench done');
  }
});
