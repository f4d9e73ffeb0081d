import type { Toxic } from '../latency/toxiproxy.js';

/** A fault of the route between loader and database. @internal */
export type DbToxicKind = 'reset_peer' | 'timeout' | 'latency' | 'bandwidth';

/** Every {@link DbToxicKind}, in the benchmark's order. @internal */
export const DB_TOXIC_KINDS: readonly DbToxicKind[] = [
  'reset_peer',
  'timeout',
  'latency',
  'bandwidth',
];

/**
 * The toxics of one fault of the loader-to-database route, applied for a while then removed:
 * `reset_peer` resets every connection (and every new one at once, while it stays); `timeout`
 * holds all data both ways (a black hole that lets go when removed); `latency` adds 1 s each
 * way (a latency spike); `bandwidth` narrows both directions to 1 MB/s.
 *
 * @internal
 */
export function dbToxics(kind: DbToxicKind): Toxic[] {
  const both = (make: (stream: 'upstream' | 'downstream') => Toxic): Toxic[] =>
    (['upstream', 'downstream'] as const).map(make);
  switch (kind) {
    case 'reset_peer':
      return both((stream) => ({
        name: `reset_${stream}`,
        type: 'reset_peer',
        stream,
        attributes: { timeout: 0 },
      }));
    case 'timeout':
      return both((stream) => ({
        name: `timeout_${stream}`,
        type: 'timeout',
        stream,
        attributes: { timeout: 0 },
      }));
    case 'latency':
      return [
        {
          name: 'spike_downstream',
          type: 'latency',
          stream: 'downstream',
          attributes: { latency: 1000, jitter: 0 },
        },
      ];
    case 'bandwidth':
      return both((stream) => ({
        name: `narrow_${stream}`,
        type: 'bandwidth',
        stream,
        attributes: { rate: 1000 },
      }));
  }
}
