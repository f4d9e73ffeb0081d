import type { TlsLegName } from './tlsLegs.js';

/** One measured run of one leg: an epoch streamed by a fresh SDK client child. */
export interface TlsLegRun {
  leg: TlsLegName;
  run: number;
  samples: number;
  /** Sample bytes the client received (the payload; framing and TLS records not counted). */
  bytes: number;
  /** From the client's `go` to its last batch. */
  wallSeconds: number;
  /** CPU seconds during the run; `loader` or `database` absent when unknown. */
  cpuSeconds: { loader?: number; client: number; database?: number };
}

/** A leg's medians over its runs. */
export interface TlsLegSummary {
  leg: TlsLegName;
  label: string;
  runs: number;
  /** Payload bytes per second at the client (median of the runs). */
  bytesPerSecond: number;
  bytesPerSecondRange: [number, number];
  samplesPerSecond: number;
  /** CPU seconds per GB (1e9 bytes) of payload; null when unknown. */
  cpuSecondsPerGB: { loader: number | null; client: number; database: number | null };
  /**
   * Throughput over plaintext's: the median over runs of this leg's bytes/s over the
   * plaintext leg's in the same run (1 for plaintext itself; null when plaintext has no run).
   */
  ratioToPlaintext: number | null;
}
