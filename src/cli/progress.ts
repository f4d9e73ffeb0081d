import cliProgress from 'cli-progress';

/** A progress display: a bar with rate and ETA on a terminal, plain periodic lines otherwise. */
export interface Progress {
  /** Sets the number of items done and, optionally, the bytes behind them. */
  update(done: number, bytes?: number): void;
  /** Prints a line without breaking the bar. */
  log(line: string): void;
  stop(): void;
}

/**
 * Creates a {@link Progress} for `total` items. On a terminal it draws a bar; when output goes
 * to a file or a CI log it prints one line every `intervalMs` (so logs stay readable).
 */
export function createProgress(
  label: string,
  total: number,
  options: { stream?: NodeJS.WriteStream; intervalMs?: number; unit?: string } = {},
): Progress {
  const stream = options.stream ?? process.stderr;
  const unit = options.unit ?? 'samples';
  const started = performance.now();
  let done = 0;
  let bytes = 0;
  const rates = (): string => {
    const secs = Math.max((performance.now() - started) / 1000, 1e-3);
    const mb = bytes > 0 ? `, ${(bytes / secs / 1e6).toFixed(1)} MB/s` : '';
    return `${(done / secs).toFixed(0)} ${unit}/s${mb}`;
  };

  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream,
        format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {rates} | ETA {eta_formatted}`,
        etaBuffer: 200,
        hideCursor: true,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, { rates: '' });
    return {
      update(d, b) {
        done = d;
        if (b !== undefined) bytes = b;
        bar.update(done, { rates: rates() });
      },
      log(line) {
        stream.write(`\r\x1b[K${line}\n`);
        bar.render();
      },
      stop() {
        bar.update(done, { rates: rates() });
        bar.stop();
      },
    };
  }

  const print = (): void => {
    const pct = total > 0 ? ((100 * done) / total).toFixed(1) : '100.0';
    stream.write(`${label}: ${done}/${total} ${unit} (${pct}%), ${rates()}\n`);
  };
  const timer = setInterval(print, options.intervalMs ?? 5000);
  timer.unref();
  return {
    update(d, b) {
      done = d;
      if (b !== undefined) bytes = b;
    },
    log(line) {
      stream.write(`${line}\n`);
    },
    stop() {
      clearInterval(timer);
      print();
    },
  };
}
