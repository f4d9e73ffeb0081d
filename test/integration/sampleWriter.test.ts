import type cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createDbClient,
  datasetNamespace,
  ensureDatasetSchema,
  SampleWriter,
  sampleId,
} from '../../src/core/index.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from './dbHelpers.js';

let client: cassandra.Client;
const keyspaces: string[] = [];

beforeAll(async () => {
  client = await createDbClient(testDbConfig());
});

afterAll(async () => {
  for (const ks of keyspaces) await dropKeyspace(client, ks);
  await client?.shutdown();
});

async function newDataset(): Promise<string> {
  const ks = uniqueKeyspace();
  keyspaces.push(ks);
  await ensureDatasetSchema(client, {
    dataset: ks,
    replication: { class: 'SimpleStrategy', replicationFactor: 1 },
    columns: [{ name: 'n', type: 'int' }],
  });
  return ks;
}

describe('SampleWriter (real node)', () => {
  it('writes small samples many to a request, large ones alone, data before metadata', async () => {
    const ks = await newDataset();
    const writer = await SampleWriter.open(client, {
      dataset: ks,
      columns: [{ name: 'n', type: 'int' }],
    });
    expect(writer.fresh).toBe(true);
    const ns = datasetNamespace(ks);
    const batch = vi.spyOn(client, 'batch');
    const execute = vi.spyOn(client, 'execute');
    try {
      const sizes = Array.from({ length: 600 }, (_, i) => (i % 100 === 0 ? 40_000 : 200));
      await Promise.all(
        sizes.map((size, i) =>
          writer.write({
            id: sampleId(`s/${i}`, ns),
            sourceKey: `s/${i}`,
            data: Buffer.alloc(size, i % 251),
            label: i % 7,
            metadata: { n: i },
          }),
        ),
      );
      const requests = batch.mock.calls.length + execute.mock.calls.length;
      // 594 small samples of 200 B, up to 32 to a request (two requests a group: data, then
      // metadata), and 6 large ones alone (two requests each): far fewer than 1,200 requests.
      expect(requests).toBeLessThan(200);
      expect(requests).toBeGreaterThanOrEqual(2 * (Math.ceil(594 / 32) + 6));
      // Each group's metadata rows are sent after its data rows, as a request of their own.
      const calls = batch.mock.calls.map((c) => {
        const rows = c[0] as Array<{ query: string; params: unknown[] }>;
        return {
          table: rows[0]!.query.includes('.samples ') ? 'samples' : 'metadata',
          ids: rows.map((r) => String(r.params[0])).join(','),
        };
      });
      const dataAt = new Map(
        calls.flatMap((c, i) => (c.table === 'samples' ? [[c.ids, i] as const] : [])),
      );
      const metadataCalls = calls.filter((c) => c.table === 'metadata');
      expect(metadataCalls.length).toBe(dataAt.size);
      for (const [i, c] of calls.entries()) {
        if (c.table === 'metadata') expect(dataAt.get(c.ids)).toBeLessThan(i);
      }
    } finally {
      batch.mockRestore();
      execute.mockRestore();
    }
    const rows = await client.execute(`SELECT id, label, n, size_bytes FROM ${ks}.metadata`);
    expect(rows.rowLength).toBe(600);
    const data = await client.execute(`SELECT id, data FROM ${ks}.samples`);
    expect(data.rowLength).toBe(600);
    const byId = new Map(data.rows.map((r) => [String(r['id']), r['data'] as Buffer]));
    for (const r of rows.rows) {
      expect(byId.get(String(r['id']))?.length).toBe(Number(r['size_bytes']));
    }

    const again = await SampleWriter.open(client, { dataset: ks, columns: [] });
    expect(again.fresh).toBe(false);
    const present = await Promise.all(
      [0, 1, 599, 600, 601].map((i) => again.exists(sampleId(`s/${i}`, ns))),
    );
    expect(present).toEqual([true, true, true, false, false]);
  });
});
