/**
 * The child side of a benchmark child process (see `startBenchChild`): its settings arrive as
 * JSON in an environment variable; it says `ready` once connected and warmed up, waits for
 * `go` on stdin, does the measured work, and reports one `result`. Messages are stdout lines
 * with a prefix, so stray output of a library cannot be mistaken for one. @internal
 */

/** Environment variable holding a child's settings as JSON. @internal */
export const CHILD_CONFIG_ENV = 'SCYLLA_LOADER_BENCH_CHILD';
/** Prefix of a protocol line on a child's stdout. @internal */
export const MESSAGE_PREFIX = '@bench ';

/** A protocol message from a child. @internal */
export type ChildMessage =
  { type: 'ready' } | { type: 'result'; result: unknown } | { type: 'error'; message: string };

function send(message: ChildMessage): void {
  // Writes to a pipe are synchronous on Linux, so a following process.exit loses nothing.
  process.stdout.write(`${MESSAGE_PREFIX}${JSON.stringify(message)}\n`);
}

/**
 * Runs a child's work: `main` gets its settings and a `ready` function to call once set up,
 * which resolves when the parent says go. The child exits when stdin closes (its parent is
 * gone), so a crashed benchmark leaves no reader behind. @internal
 */
export function runBenchChild<C, R>(
  main: (config: C, ready: () => Promise<void>) => Promise<R>,
): void {
  const raw = process.env[CHILD_CONFIG_ENV];
  if (!raw) {
    process.stderr.write(`${CHILD_CONFIG_ENV} is not set: this script is run by bench stream\n`);
    process.exit(2);
  }
  let go: (() => void) | undefined;
  const started = new Promise<void>((resolve) => (go = resolve));
  let buffered = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => {
    buffered += chunk;
    if (buffered.includes('go\n')) go?.();
  });
  process.stdin.on('end', () => process.exit(3));
  const ready = async (): Promise<void> => {
    send({ type: 'ready' });
    await started;
  };
  main(JSON.parse(raw) as C, ready).then(
    (result) => {
      send({ type: 'result', result });
      process.exit(0);
    },
    (err: unknown) => {
      send({ type: 'error', message: (err as Error)?.stack ?? String(err) });
      process.exit(1);
    },
  );
}
