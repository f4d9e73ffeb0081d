import { describe, expect, it } from 'vitest';
import { createLoaderMetrics } from '../../src/core/index.js';
import { createServerMetrics } from '../../src/server/metrics/serverMetrics.js';

const RPC_METRICS = [
  'scylla_loader_active_streams',
  'scylla_loader_stream_errors_total',
  'scylla_loader_client_blocked_seconds_total',
  'scylla_loader_calls_refused_total',
  'scylla_loader_auth_tokens_file_stale',
  'scylla_loader_auth_tokens_reload_failures_total',
];

describe('server metrics', () => {
  it("keep the RPC calls' metrics out of the core and on the core's registry in a server", async () => {
    const core = createLoaderMetrics();
    const coreNames = (await core.registry.getMetricsAsJSON()).map((m) => m.name);
    expect(coreNames).toContain('scylla_loader_samples_sent_total');
    for (const name of RPC_METRICS) expect(coreNames).not.toContain(name);

    const server = createServerMetrics();
    server.callsRefused.inc({ rpc: 'StreamBatches', code: 'UNAUTHENTICATED' });
    const text = await server.registry.metrics();
    for (const name of [
      ...RPC_METRICS,
      'scylla_loader_samples_sent_total',
      'process_cpu_seconds_total',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect(text).toContain(
      'scylla_loader_calls_refused_total{rpc="StreamBatches",code="UNAUTHENTICATED"} 1',
    );
  });

  it('name the held-bytes limit in its help as the caller names the setting', async () => {
    const help = async (m: ReturnType<typeof createLoaderMetrics>): Promise<string | undefined> =>
      (await m.registry.getMetricsAsJSON()).find((x) => x.name === 'scylla_loader_held_bytes')
        ?.help;
    expect(await help(createLoaderMetrics())).toMatch(/against maxHeldBytes\.$/);
    expect(
      await help(createServerMetrics({ settingNames: { maxHeldBytes: '--max-held-bytes' } })),
    ).toMatch(/against --max-held-bytes\.$/);
  });
});
