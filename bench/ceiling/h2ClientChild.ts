/**
 * Child process of `bench ceiling`: a bare Node HTTP/2 client reading the HTTP/2 server
 * child's stream and counting bytes, with the SDK's 64 MiB stream and connection windows; a
 * short untimed warm-up request first. @internal
 */
import http2 from 'node:http2';
import { once } from 'node:events';
import { DEFAULT_FLOW_CONTROL_WINDOW } from '../../src/client/index.js';
import { runBenchChild } from '../stream/childProtocol.js';
import type { CeilingClientResult } from './grpcClientChild.js';

/** Settings of the HTTP/2 client child. @internal */
export interface H2ClientChildConfig {
  url: string;
}

async function read(session: http2.ClientHttp2Session, path: string): Promise<number> {
  const req = session.request({ ':path': path });
  let bytes = 0;
  req.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  req.end();
  await once(req, 'end');
  return bytes;
}

runBenchChild<H2ClientChildConfig, CeilingClientResult>(async (config, ready) => {
  const session = http2.connect(config.url, {
    settings: { initialWindowSize: DEFAULT_FLOW_CONTROL_WINDOW },
  });
  session.on('error', () => undefined);
  try {
    await once(session, 'connect');
    session.setLocalWindowSize(DEFAULT_FLOW_CONTROL_WINDOW);
    await read(session, '/warmup');
    await ready();
    const t0 = performance.now();
    const bytes = await read(session, '/measured');
    // Batches are counted by the parent, from the size of the server's message.
    return { bytes, batches: 0, wallSeconds: (performance.now() - t0) / 1000 };
  } finally {
    session.close();
  }
});
