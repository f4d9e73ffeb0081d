import net from 'node:net';
import tls from 'node:tls';

/** A CQL v4 OPTIONS request: header only (version, flags, stream 0, opcode 0x05, length 0). */
const OPTIONS_FRAME = Buffer.from([0x04, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00]);

/**
 * Whether a CQL server answers on `host:port`: sends an OPTIONS request and waits for any
 * response frame. An open TCP port alone is not enough, and this is far cheaper than a driver
 * connection (no topology discovery, no pools, no log noise). `useTls` for a node whose CQL
 * port speaks TLS only: `true`, or the client certificate to present to one that requires it.
 *
 * @internal
 */
export function probeCql(
  host: string,
  port: number,
  timeoutMs = 2000,
  useTls: boolean | { cert: string; key: string } = false,
): Promise<boolean> {
  return new Promise((resolve) => {
    // Over TLS (a `--tls` node refuses plaintext) without checking the certificate: this only
    // asks whether the node is up, and sends nothing secret.
    const socket = useTls
      ? tls.connect({
          host,
          port,
          rejectUnauthorized: false,
          ...(typeof useTls === 'object' ? useTls : {}),
        })
      : net.connect({ host, port });
    let received = Buffer.alloc(0);
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on(useTls ? 'secureConnect' : 'connect', () => socket.write(OPTIONS_FRAME));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      // A response header is 9 bytes and has the direction bit set in its version byte.
      if (received.length >= 9) done(((received[0] ?? 0) & 0x80) !== 0);
    });
    socket.on('end', () => done(false));
  });
}
