import type { Toxic } from '../../test/support/index.js';

/**
 * Toxics that add a round trip of `rttMs` to a route: half of it on each direction, each with
 * a jitter of a tenth of that half (at most 5 ms). A round trip of 0 still gets (zero) latency
 * toxics, so every run pays the proxy's own cost alike. @internal
 */
export function latencyToxics(rttMs: number): Toxic[] {
  const half = rttMs / 2;
  const jitter = Math.min(half / 10, 5);
  return (['upstream', 'downstream'] as const).map((stream) => ({
    name: `latency_${stream}`,
    type: 'latency',
    stream,
    attributes: { latency: Math.round(half), jitter: Math.round(jitter) },
  }));
}

/** The congested route: a long round trip and a narrow pipe. @internal */
export interface CongestedRoute {
  rttMs: number;
  /** Bandwidth each way, MB/s. */
  megabytesPerSecond: number;
}

/** Default congested route: 300 ms round trip, 20 MB/s. @internal */
export const DEFAULT_CONGESTED: CongestedRoute = { rttMs: 300, megabytesPerSecond: 20 };

/**
 * Toxics of the congested route: its latency ({@link latencyToxics}) plus a bandwidth limit on
 * both directions (toxiproxy's `rate` is in KB/s). @internal
 */
export function congestedToxics(route: CongestedRoute): Toxic[] {
  const rate = Math.round(route.megabytesPerSecond * 1000);
  return [
    ...latencyToxics(route.rttMs),
    ...(['upstream', 'downstream'] as const).map((stream): Toxic => ({
      name: `bandwidth_${stream}`,
      type: 'bandwidth',
      stream,
      attributes: { rate },
    })),
  ];
}
