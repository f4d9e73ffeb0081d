import net from 'node:net';

/**
 * Whether something accepts TCP connections on `host:port`. Before a node starts, an open CQL
 * or storage port on its address means another process owns it; without this check that
 * process would answer the readiness probe in the new node's place.
 *
 * @internal
 */
export function isPortOpen(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (open: boolean): void => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('connect', () => done(true));
    socket.on('error', () => done(false));
  });
}
