import { childScriptArgs } from './benchScripts.js';
import { CHILD_CONFIG_ENV, MESSAGE_PREFIX, type ChildMessage } from './childProtocol.js';
import { endChild, spawnPinned, tail, type SpawnPinnedOptions } from '../../test/support/index.js';

/** A running benchmark child (see `runBenchChild` for its side). @internal */
export interface BenchChild<R> {
  pid: number;
  /** Resolves when the child is set up and waits for {@link BenchChild.go}. */
  ready: Promise<void>;
  /** Starts the measured work. */
  go(): void;
  /** The child's result; rejects when it fails, exits without one, or takes too long. */
  result: Promise<R>;
  /** Ends the child if it still runs, and waits until it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts a child script of this folder with its settings, optionally pinned to CPUs and with
 * extra node flags (e.g. `--cpu-prof`). With `executable` and `args` it starts any program that
 * speaks the protocol instead (`bench transform`'s Python legs); `script` then only names it.
 * @internal
 */
export function startBenchChild<R>(
  script: string,
  config: unknown,
  options: SpawnPinnedOptions & { timeoutMs?: number; nodeFlags?: string[]; args?: string[] } = {},
): BenchChild<R> {
  const argv = options.args ?? [...(options.nodeFlags ?? []), ...childScriptArgs(script)];
  const child = spawnPinned(argv, {
    ...options,
    env: { ...options.env, [CHILD_CONFIG_ENV]: JSON.stringify(config) },
  });
  const stderr = tail(child.stderr);
  let onReady!: () => void;
  let onResult!: (r: R) => void;
  let onFail!: (e: Error) => void;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const result = new Promise<R>((resolve, reject) => {
    onResult = resolve;
    onFail = reject;
  });
  // Whoever awaits `result` sees the failure; `ready` must not hang when the child dies early.
  const readyOrFail = Promise.race([ready, result.then(() => undefined)]);
  result.catch(() => undefined);
  let settled = false;
  let settledOk = false;
  const fail = (message: string): void => {
    if (settled) return;
    settled = true;
    const err = stderr().trim();
    onFail(new Error(`${script} (pid ${child.pid}): ${message}${err ? `\n${err}` : ''}`));
  };

  let buffered = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (!line.startsWith(MESSAGE_PREFIX)) continue;
      const message = JSON.parse(line.slice(MESSAGE_PREFIX.length)) as ChildMessage;
      if (message.type === 'ready') onReady();
      else if (message.type === 'result' && !settled) {
        settled = true;
        settledOk = true;
        onResult(message.result as R);
      } else if (message.type === 'error') fail(message.message);
    }
  });
  child.on('error', (err) => fail(err.message));
  // 'close', not 'exit': the process can exit before the last of its stdout (a long result
  // line) has been read, and only 'close' comes after every chunk.
  child.on('close', (code, signal) =>
    fail(`exited (${signal ?? `code ${code}`}) without a result`),
  );
  child.stdin?.on('error', () => undefined);
  const timer = setTimeout(() => {
    fail(`no result after ${options.timeoutMs} ms`);
    child.kill('SIGKILL');
  }, options.timeoutMs ?? 600_000);
  timer.unref();
  result.then(
    () => clearTimeout(timer),
    () => clearTimeout(timer),
  );

  return {
    pid: child.pid ?? -1,
    ready: readyOrFail,
    go: () => child.stdin?.write('go\n'),
    result,
    // A child that reported its result is on its way out (and may be writing a profile).
    stop: async () => {
      clearTimeout(timer);
      await endChild(child, 5_000, settledOk ? 10_000 : 0);
    },
  };
}
