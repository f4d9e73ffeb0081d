import type { StreamLimits } from '../config/streamLimits.js';

/**
 * Samples per read query for a dataset whose mean sample is `meanSampleBytes` (undefined when
 * unknown: nothing ingested yet, or an older dataset without sizes): `groupReadsSize` when
 * reads are grouped, 1 (a single-row read per sample) when not. `auto` groups only datasets
 * known to be small: for them a read's fixed cost (a request through the driver, a coordinator
 * round) outweighs its bytes, which one query for many ids shares; large samples gain nothing
 * from it and would wait for a group's slowest member.
 */
export function groupReadSize(
  limits: Pick<StreamLimits, 'groupReads' | 'groupReadsMaxBytes' | 'groupReadsSize'>,
  meanSampleBytes: number | undefined,
): number {
  switch (limits.groupReads) {
    case 'off':
      return 1;
    case 'on':
      return limits.groupReadsSize;
    case 'auto':
      return meanSampleBytes !== undefined &&
        meanSampleBytes > 0 &&
        meanSampleBytes <= limits.groupReadsMaxBytes
        ? limits.groupReadsSize
        : 1;
  }
}
