/**
 * A `serve` child started by `startProbedServe`, with what the fault benchmarks watch: its
 * pid (RSS and file descriptors from `/proc`), both ports, its JSON log records and whether it
 * exited on its own (a crash).
 *
 * @internal
 */
export interface ProbedServe {
  pid: number;
  /** `127.0.0.1:<port>` of its gRPC server. */
  address: string;
  /** `127.0.0.1:<port>` of its `/metrics` and `/healthz` server. */
  metricsAddress: string;
  /** Every JSON log record it wrote after it started serving, in order. */
  records: Record<string, unknown>[];
  /**
   * How it exited when it did so before `stop()` was called (a crash: a signal or an exit
   * code), or the first worker death its primary logged (`serve --workers N` replaces a dead
   * worker, which is a crash all the same); undefined while nothing died.
   */
  crash(): string | undefined;
  /** Workers its primary logged as dead (replaced or not). */
  workerDeaths(): number;
  /** The end of its stderr and stdout, for error messages. */
  output(): string;
  /** SIGTERM (graceful shutdown), SIGKILL if it is still there after a while. */
  stop(): Promise<void>;
}
