/**
 * Reads a loader's `/metrics` once and returns every sample by its full name with labels as
 * Prometheus prints it (`process_resident_memory_bytes`, `scylla_loader_stream_errors_total{code="INTERNAL"}`).
 * Scraping also resets prom-client's event-loop delay histogram, so two scrapes bracket a
 * window: the second one's `nodejs_eventloop_lag_p99_seconds` covers the time between them.
 *
 * @internal
 */
export async function scrapeMetrics(
  metricsAddress: string,
  timeoutMs = 10_000,
): Promise<Map<string, number>> {
  const res = await fetch(`http://${metricsAddress}/metrics`, {
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`GET /metrics on ${metricsAddress}: HTTP ${res.status}`);
  const samples = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    if (space > 0) samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}
