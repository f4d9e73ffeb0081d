import type { EventEmitter } from 'node:events';
import type { Http2Session } from 'node:http2';
import type { Server } from '@grpc/grpc-js';

/** The part of grpc-js's server this relies on (build/src/server.js, 1.10 to 1.14 at least). */
interface ServerInternals {
  http2Servers?: Map<EventEmitter, { sessions?: Set<Http2Session> }>;
}

/**
 * Closes each HTTP/2 connection of a bound server that would give its peer address more than
 * `limit` open connections: a client could otherwise open connections until the process runs
 * out of file descriptors or memory (each session holds buffers and windows). `onRefused` is
 * told of each connection closed. Call it once the server is bound, as `raiseReceiveWindow`.
 *
 * @returns Whether the limit is applied (false when a grpc-js version lacks the internals).
 * @internal
 */
export function limitConnectionsPerPeer(
  server: Server,
  limit: number,
  onRefused: (peer: string) => void,
): boolean {
  const servers = (server as unknown as ServerInternals).http2Servers;
  if (!(servers instanceof Map) || servers.size === 0) return false;
  const open = new Map<string, number>();
  const track = (session: Http2Session): void => {
    const peer = session.socket?.remoteAddress;
    if (peer === undefined) return;
    const count = (open.get(peer) ?? 0) + 1;
    if (count > limit) {
      onRefused(peer);
      session.destroy();
      return;
    }
    open.set(peer, count);
    session.once('close', () => {
      const left = (open.get(peer) ?? 1) - 1;
      if (left <= 0) open.delete(peer);
      else open.set(peer, left);
    });
  };
  for (const [http2Server] of servers) http2Server.on('session', track);
  return true;
}
