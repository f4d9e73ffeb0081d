import type { Http2Session } from 'node:http2';
import type { EventEmitter } from 'node:events';
import type { Server } from '@grpc/grpc-js';

/** The part of grpc-js's server this relies on (build/src/server.js, 1.10 to 1.14 at least). */
interface ServerInternals {
  http2Servers?: Map<EventEmitter, { sessions?: Set<Http2Session> }>;
}

/**
 * Gives every HTTP/2 connection of a bound server a receive window of `bytes`, for the
 * connection and for each stream: what a client may send before the loader acknowledges. The
 * HTTP/2 default of 64 KiB caps an upload at 64 KiB per round trip (measured: an SDK ingest
 * of 100 kB samples over a 20 ms round trip ran at 1.9 MB/s with it, 36 MB/s with 64 MiB), and
 * grpc-js servers ignore `grpc-node.flow_control_window` (they pass no window to Node's http2).
 * So, like the client for batches, the loader raises its own window: on each session, a
 * WINDOW_UPDATE for the connection and a SETTINGS frame for its streams (which applies to
 * streams already open too). A stream's unread requests are still bounded: the window only
 * lets the client send ahead up to `bytes`, and handlers read at their own pace.
 *
 * Call it once the server is bound (grpc-js makes its http2 servers at bind); sessions that
 * arrived before are raised too. When a grpc-js version lacks the internals, nothing changes.
 *
 * @returns Whether the window is raised.
 */
export function raiseReceiveWindow(server: Server, bytes: number): boolean {
  const servers = (server as unknown as ServerInternals).http2Servers;
  if (!(servers instanceof Map) || servers.size === 0) return false;
  const raise = (session: Http2Session): void => {
    try {
      session.setLocalWindowSize(bytes);
      session.settings({ initialWindowSize: bytes });
    } catch {
      // A session closing as it arrives: nothing to raise.
    }
  };
  for (const [http2Server, entry] of servers) {
    http2Server.on('session', raise);
    for (const session of entry.sessions ?? []) raise(session);
  }
  return true;
}
