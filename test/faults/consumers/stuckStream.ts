import http2 from 'node:http2';
import { loaderCodec } from '../fuzz/loaderCodec.js';

/** A StreamBatches call whose reader stopped without closing. @internal */
export interface StuckStream {
  /** Whether the loader ended the call or its connection. */
  ended(): boolean;
  close(): void;
}

/**
 * Opens a StreamBatches call over a plain HTTP/2 session (node:http2, the default 64 KiB
 * windows), reads its first chunk and then never reads again nor closes: the session stays
 * alive and answers pings, but no flow-control window is given back, so the loader can send
 * nothing more. What the loader then holds for it is the stream's window at most.
 *
 * @internal
 */
export async function openStuckStream(address: string, request: object): Promise<StuckStream> {
  const session = http2.connect(`http://${address}`);
  let ended = false;
  session.on('error', () => undefined);
  session.on('close', () => (ended = true));
  const body = loaderCodec().encode('StreamBatches', request);
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(body.length, 1);
  const req = session.request({
    ':method': 'POST',
    ':path': '/scylla_loader.v1.LoaderService/StreamBatches',
    'content-type': 'application/grpc',
    te: 'trailers',
  });
  req.on('error', () => undefined);
  req.on('close', () => (ended = true));
  req.end(Buffer.concat([prefix, body]));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('a stuck stream got no first chunk in 120 s')),
      120_000,
    );
    req.once('data', () => {
      clearTimeout(timer);
      req.pause();
      resolve();
    });
  });
  return {
    ended: () => ended,
    close: () => session.destroy(),
  };
}
