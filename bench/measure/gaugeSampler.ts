/** Mean and largest value of a gauge over a run's scrapes. */
export interface GaugeSeries {
  mean: number;
  max: number;
  /** Scrapes that answered. */
  scrapes: number;
}

/**
 * The sum over all label sets of the samples named `name` in a Prometheus text exposition
 * (`name 3` and `name{a="b"} 3` lines; comments and other names ignored); undefined when
 * there is none. @internal
 */
export function sumOfSamples(text: string, name: string): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    const value = Number.parseFloat(rest.slice(rest.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum = (sum ?? 0) + value;
  }
  return sum;
}

/**
 * Scrapes a loader's `/metrics` 50 ms after the start and then every `everyMs` until stopped,
 * and keeps, per gauge, the mean and the largest of its values (summed over label sets): how a
 * run's reads in flight or held bytes moved, where the end-of-run counters say only how much.
 * A failed scrape leaves a gap; a slow one is given up after four periods, and no scrape
 * starts while one is running. @internal
 */
export function startGaugeSampler(
  metricsAddress: string,
  names: readonly string[],
  everyMs = 250,
): { stop: () => Promise<Record<string, GaugeSeries | undefined>> } {
  const values = new Map<string, number[]>(names.map((n) => [n, []]));
  let busy: Promise<void> | undefined;
  const scrape = async (): Promise<void> => {
    try {
      const res = await fetch(`http://${metricsAddress}/metrics`, {
        signal: AbortSignal.timeout(everyMs * 4),
      });
      const text = await res.text();
      for (const name of names) {
        const v = sumOfSamples(text, name);
        if (v !== undefined) values.get(name)!.push(v);
      }
    } catch {
      // A missed scrape leaves a gap; the series is about the run, not every instant.
    }
  };
  const tick = (): void => {
    if (busy === undefined) busy = scrape().finally(() => (busy = undefined));
  };
  // A first look early on, so a short run is seen at least once.
  const first = setTimeout(tick, 50);
  const timer = setInterval(tick, everyMs);
  return {
    stop: async () => {
      clearTimeout(first);
      clearInterval(timer);
      await busy;
      return Object.fromEntries(
        names.map((n) => {
          const v = values.get(n)!;
          return [
            n,
            v.length === 0
              ? undefined
              : {
                  mean: v.reduce((a, b) => a + b, 0) / v.length,
                  max: Math.max(...v),
                  scrapes: v.length,
                },
          ];
        }),
      );
    },
  };
}
