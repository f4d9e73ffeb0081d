import net from 'node:net';

/**
 * A TCP port that is free on `host` right now, chosen by the OS. Used for JMX, which binds
 * 127.0.0.1 whatever address the node has, so nodes of different clusters on one machine
 * would otherwise collide on the customary 7199.
 *
 * @internal
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
