import { describe, expect, it } from 'vitest';
import { formatSoakReport } from '../faults/soak/runSoakBench.js';
import { runSoakBench } from '../faults/soak/runSoakBench.js';
import { testDbConfig } from '../support/dbHelpers.js';

describe('faults: soak', () => {
  it(
    '64 streams for a minute: RSS growth under 8% after warm-up, no fd growth, event loop reported',
    { timeout: 240_000 },
    async () => {
      const r = await runSoakBench({
        db: testDbConfig(),
        streams: 64,
        // A minute measured after a 30 s warm-up (RSS settles only once V8 has sized its heap).
        seconds: 90,
        warmupSeconds: 30,
        sampleEverySeconds: 5,
      });
      console.log(formatSoakReport(r));
      console.log(
        r.samples
          .map((x) => `${x.at.toFixed(0)}s ${(x.rssBytes / 2 ** 20).toFixed(0)}MiB`)
          .join(', '),
      );
      expect(r.crash).toBeUndefined();
      expect(r.streamErrors).toBe(0);
      expect(r.samplesDelivered).toBeGreaterThan(0);
      // Until the sampling caches let finished epochs go (30 s after their last look up), every
      // stream-epoch left 16 kB behind: +10.6% and +13% in CI's runs of this minute. Since, 0.7
      // to 0.9% here and 0.7% over the 10-minute `bench soak`. The bound leaves room for V8
      // still sizing its heaps on a loaded machine, and still catches a leak of what the
      // streams carry: at ~30,000 samples/s, keeping even 1% of them passes 8% within seconds.
      expect(r.rssGrowthPercent).toBeLessThan(8);
      // Connections are pooled: the count after warm-up is the steady state; a few of slack
      // for the database driver's and metrics' short-lived sockets.
      expect(r.fdsEnd - r.fdsAfterWarmup).toBeLessThanOrEqual(4);
      expect(r.eventLoopP99Seconds).toBeGreaterThan(0);
    },
  );
});
