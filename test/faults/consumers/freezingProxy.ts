import net from 'node:net';

/** A TCP relay in front of the loader that can play dead. @internal */
export interface FreezingProxy {
  /** `127.0.0.1:<port>` to connect to instead of the loader. */
  address: string;
  /**
   * From now on nothing is relayed either way; bytes from the loader are still read (so TCP
   * keeps acking) and dropped. The loader sees a peer that never answers anything, keepalive
   * pings included: a trainer whose host froze or whose route died.
   */
  freeze(): void;
  /** Resolves when the loader closes its side of a relayed connection (ms since the freeze). */
  loaderClosed(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Starts a {@link FreezingProxy} relaying to `target` (`host:port`).
 *
 * @internal
 */
export async function startFreezingProxy(target: string): Promise<FreezingProxy> {
  const colon = target.lastIndexOf(':');
  const host = target.slice(0, colon);
  const port = Number(target.slice(colon + 1));
  let frozenAt: number | undefined;
  const sockets = new Set<net.Socket>();
  let onLoaderClosed: ((ms: number) => void) | undefined;
  const closed = new Promise<number>((resolve) => (onLoaderClosed = resolve));
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    sockets.add(client).add(upstream);
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    client.on('data', (chunk) => {
      if (frozenAt === undefined) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (frozenAt === undefined) client.write(chunk);
    });
    const upstreamGone = (): void => {
      if (frozenAt !== undefined) onLoaderClosed?.(Date.now() - frozenAt);
      else client.destroy();
    };
    upstream.on('end', upstreamGone);
    upstream.on('close', upstreamGone);
    client.on('close', () => {
      if (frozenAt === undefined) upstream.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: own } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${own}`,
    freeze: () => {
      frozenAt = Date.now();
    },
    loaderClosed: () => closed,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
