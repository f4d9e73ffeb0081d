import type { Readable } from 'node:stream';

/**
 * Caps how many received responses a grpc-js client stream buffers before it stops reading
 * (and so, through HTTP/2 flow control, stops the server). grpc-js builds its streams with
 * Node's object-mode default of 16 and has no option for it (grpc/grpc-node#123), which for
 * batches of up to 256 MiB could hold gigabytes; so the stream's `highWaterMark` is lowered
 * before anything is read. If a Node version ever hides that field, nothing changes and the
 * default bound applies.
 *
 * @internal
 */
export function limitBuffering(stream: Readable, maxBuffered: number): void {
  const state = (stream as unknown as { _readableState?: { highWaterMark?: unknown } })
    ._readableState;
  if (state && typeof state.highWaterMark === 'number') {
    state.highWaterMark = Math.max(1, maxBuffered);
  }
}
