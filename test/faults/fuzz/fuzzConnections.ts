import http2 from 'node:http2';
import net from 'node:net';
import fc from 'fast-check';

/** What happened to the hostile connections of `fuzzConnections`. @internal */
export interface ConnectionFuzzReport {
  /** Connections that sent random bytes (some after a valid preface), then waited. */
  randomBytes: number;
  /** Of those, how many the loader closed by itself within the wait. */
  randomBytesClosedByServer: number;
  /** Raw TCP connections left half-open: a partial preface or a partial frame, then silence. */
  halfOpen: number;
  /** HTTP/2 sessions with a call whose request message never completes (slowloris). */
  partialCalls: number;
  /** Of the half-open connections and partial calls, how many the loader closed while held. */
  heldClosedByServer: number;
  /** How long they were held, in milliseconds. */
  heldMs: number;
}

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/** Options of {@link fuzzConnections}. @internal */
export interface ConnectionFuzzOptions {
  /** Connections sending random bytes. */
  randomBytes: number;
  /** Raw half-open connections to hold. */
  halfOpen: number;
  /** HTTP/2 calls whose request never completes, to hold. */
  partialCalls: number;
  /** How long to hold them (the caller checks the loader meanwhile through `whileHeld`). */
  holdMs: number;
  seed: number;
  /** Runs while the half-open connections and partial calls are held. */
  whileHeld?: () => Promise<void>;
}

/**
 * Attacks the gRPC port below gRPC: connections that send random bytes (alone, or after a
 * valid HTTP/2 preface), raw connections that stop half-way through the preface or a frame
 * and hold, and real HTTP/2 sessions (node:http2) with a StreamBatches call whose 5-byte gRPC
 * message prefix announces more bytes than ever come. Everything is closed at the end.
 *
 * @internal
 */
export async function fuzzConnections(
  address: string,
  options: ConnectionFuzzOptions,
): Promise<ConnectionFuzzReport> {
  const [host, portText] = [
    address.slice(0, address.lastIndexOf(':')),
    address.slice(address.lastIndexOf(':') + 1),
  ];
  const port = Number(portText);
  const payloads = fc.sample(
    fc.tuple(fc.boolean(), fc.uint8Array({ minLength: 1, maxLength: 4096 })),
    { numRuns: Math.max(options.randomBytes, 1), seed: options.seed },
  );
  let randomClosed = 0;
  await Promise.all(
    payloads.slice(0, options.randomBytes).map(async ([afterPreface, bytes]) => {
      const closed = await new Promise<boolean>((resolve) => {
        const socket = net.connect(port, host);
        const timer = setTimeout(() => {
          socket.destroy();
          resolve(false);
        }, 3_000);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          clearTimeout(timer);
          resolve(true);
        });
        socket.on('connect', () => {
          socket.write(afterPreface ? Buffer.concat([PREFACE, bytes]) : Buffer.from(bytes));
        });
        socket.resume();
      });
      if (closed) randomClosed++;
    }),
  );

  const held: { closed: boolean; end(): void }[] = [];
  const halves = [
    PREFACE.subarray(0, 10),
    PREFACE,
    // A SETTINGS frame header cut after 5 of its 9 bytes.
    Buffer.concat([PREFACE, Buffer.from([0, 0, 6, 4, 0])]),
    // A HEADERS frame announcing 16 KiB on stream 1, then 100 bytes of it.
    Buffer.concat([
      PREFACE,
      Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]),
      Buffer.from([0, 0x40, 0, 1, 4, 0, 0, 0, 1]),
      Buffer.alloc(100, 0x41),
    ]),
  ];
  for (let i = 0; i < options.halfOpen; i++) {
    const socket = net.connect(port, host);
    const entry = { closed: false, end: () => socket.destroy() };
    socket.on('error', () => undefined);
    socket.on('close', () => (entry.closed = true));
    socket.on('connect', () => socket.write(halves[i % halves.length]!));
    socket.resume();
    held.push(entry);
  }
  for (let i = 0; i < options.partialCalls; i++) {
    const session = http2.connect(`http://${address}`);
    const entry = { closed: false, end: () => session.destroy() };
    session.on('error', () => undefined);
    session.on('close', () => (entry.closed = true));
    const req = session.request({
      ':method': 'POST',
      ':path': '/scylla_loader.v1.LoaderService/StreamBatches',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    req.on('error', () => undefined);
    req.on('close', () => (entry.closed = true));
    req.resume();
    // "Uncompressed, 1000 bytes follow", then 10 of them.
    req.write(Buffer.concat([Buffer.from([0, 0, 0, 0x03, 0xe8]), Buffer.alloc(10, 0x0a)]));
    held.push(entry);
  }
  const started = Date.now();
  let closedByServer: number;
  try {
    await Promise.all([
      options.whileHeld?.(),
      new Promise((resolve) => setTimeout(resolve, options.holdMs)),
    ]);
  } finally {
    closedByServer = held.filter((h) => h.closed).length;
    for (const h of held) h.end();
  }
  return {
    randomBytes: options.randomBytes,
    randomBytesClosedByServer: randomClosed,
    halfOpen: options.halfOpen,
    partialCalls: options.partialCalls,
    heldClosedByServer: closedByServer,
    heldMs: Date.now() - started,
  };
}
