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
