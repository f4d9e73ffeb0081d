import { createServer } from 'node:net';

/**
 * Name of a child script of this folder for `startBenchChild`, which resolves names against
 * `bench/stream/` (tsx from source, the build's `.js` otherwise). @internal
 */
export function ceilingScript(name: string): string {
  return `../ceiling/${name}`;
}

/** A TCP port free on 127.0.0.1 right now (for a child to listen on). @internal */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
