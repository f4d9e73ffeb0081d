/**
 * Child process of `bench ceiling`: a bare Node HTTP/2 server that answers a request on
 * `/measured` with the same encoded batch written `batches` times on one stream (any other
 * path: `warmupBatches` times), respecting backpressure (`write()` false waits for 'drain').
 * Its windows are those the loader asks for. Reports once the measured stream's client has
 * disconnected. @internal
 */
import http2 from 'node:http2';
import { once } from 'node:events';
import { FLOW_CONTROL_WINDOW_BYTES } from '../../src/server/index.js';
import { runBenchChild } from '../stream/childProtocol.js';
import { encodeCeilingBatch, type CeilingBatchShape } from './ceilingBatch.js';

/** Settings of the HTTP/2 server child. @internal */
export interface H2ServerChildConfig extends CeilingBatchShape {
  port: number;
  batches: number;
  warmupBatches: number;
}

/** What the HTTP/2 server child reports. @internal */
export interface H2ServerChildResult {
  batchesWritten: number;
  messageBytes: number;
}

runBenchChild<H2ServerChildConfig, H2ServerChildResult>(async (config, ready) => {
  const { message } = encodeCeilingBatch(config);
  let onMeasuredDone!: (n: number) => void;
  let onFail!: (e: Error) => void;
  const measuredDone = new Promise<number>((resolve, reject) => {
    onMeasuredDone = resolve;
    onFail = reject;
  });
  const server = http2.createServer({
    settings: { initialWindowSize: FLOW_CONTROL_WINDOW_BYTES },
  });
  server.on('session', (session) => {
    session.on('localSettings', () => session.setLocalWindowSize(FLOW_CONTROL_WINDOW_BYTES));
  });
  server.on('stream', (stream, headers) => {
    const measured = headers[':path'] === '/measured';
    const count = measured ? config.batches : config.warmupBatches;
    stream.respond({ ':status': 200, 'content-type': 'application/octet-stream' });
    void (async () => {
      let written = 0;
      try {
        for (; written < count && !stream.destroyed; written++) {
          if (!stream.write(message)) await once(stream, 'drain');
        }
        stream.end();
        // Reported once the client has gone: 'finish' means only handed to the session, and
        // this process exiting then would cut off what it still buffers.
        if (measured) {
          const session = stream.session;
          if (session && !session.closed && !session.destroyed) await once(session, 'close');
          onMeasuredDone(written);
        }
      } catch (err) {
        stream.destroy(err as Error);
        if (measured) onFail(err as Error);
      }
    })();
  });
  server.listen(config.port, '127.0.0.1');
  await once(server, 'listening');
  try {
    await ready();
    const batchesWritten = await measuredDone;
    return { batchesWritten, messageBytes: message.length };
  } finally {
    server.close();
  }
});
