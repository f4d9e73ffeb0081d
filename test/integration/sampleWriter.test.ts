import type cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createDbClient,
  datasetNamespace,
  ensureDatasetSchema,
  SampleWriter,
  sampleId,
} from '../../src/core/index.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

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
    // Every request is recorded when it starts and when the database has answered it.
    const events: Array<{ at: 'start' | 'end'; table: string; ids: string[] }> = [];
    const record =
      <A extends unknown[], R>(
        fn: (...args: A) => Promise<R>,
        rowsOf: (args: A) => Array<{ query: string; params: unknown[] }>,
      ) =>
      async (...args: A): Promise<R> => {
        const rows = rowsOf(args);
        const table = rows[0]!.query.includes('.samples ') ? 'samples' : 'metadata';
        const ids = rows.map((r) => String(r.params[0]));
        events.push({ at: 'start', table, ids });
        const result = await fn(...args);
        events.push({ at: 'end', table, ids });
        return result;
      };
    const realBatch = client.batch.bind(client) as (q: unknown, o: unknown) => Promise<unknown>;
    const realExecute = client.execute.bind(client) as (
      q: string,
      p: unknown,
      o: unknown,
    ) => Promise<unknown>;
    const batch = vi
      .spyOn(client, 'batch')
      .mockImplementation(
        record(realBatch, ([q]) => q as Array<{ query: string; params: unknown[] }>) as never,
      );
    const execute = vi
      .spyOn(client, 'execute')
      .mockImplementation(
        record(realExecute, ([query, params]) => [{ query, params: params as unknown[] }]) as never,
      );
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
      const requests = events.filter((e) => e.at === 'start');
      // 594 small samples of 200 B, up to 32 to a request, and 6 of 40 kB alone; metadata rows
      // many to a request: far fewer requests than the 1,200 rows.
      expect(requests.length).toBeLessThan(120);
      expect(
        requests.filter((r) => r.table === 'samples' && r.ids.length === 1).length,
      ).toBeGreaterThanOrEqual(6);
      // A sample's metadata row is sent only after the database answered for its data row.
      const dataStored = new Map<string, number>();
      for (const [i, e] of events.entries()) {
        if (e.at === 'end' && e.table === 'samples') for (const id of e.ids) dataStored.set(id, i);
      }
      let metadataRows = 0;
      for (const [i, e] of events.entries()) {
        if (e.at !== 'start' || e.table !== 'metadata') continue;
        for (const id of e.ids) {
          metadataRows++;
          expect(dataStored.get(id)).toBeLessThan(i);
        }
      }
      expect(metadataRows).toBe(600);
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

  it('a failed request rejects its samples without hanging, and writes no metadata row for them', async () => {
    const ks = await newDataset();
    const writer = await SampleWriter.open(client, {
      dataset: ks,
      columns: [{ name: 'n', type: 'int' }],
    });
    const ns = datasetNamespace(ks);
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        writer.write({
          id: sampleId(`s/${i}`, ns),
          sourceKey: `s/${i}`,
          data: Buffer.from(`sample ${i}`),
          label: 0,
          // Sample 7's value is no int: its metadata request fails at the driver.
          metadata: { n: i === 7 ? 'seven' : i },
        }),
      ),
    );
    const failed = results.filter((r) => r.status === 'rejected').length;
    expect(failed).toBeGreaterThanOrEqual(1);
    expect(results[7]!.status).toBe('rejected');
    const listed = await client.execute(`SELECT id FROM ${ks}.metadata`);
    expect(listed.rowLength).toBe(50 - failed);
    expect(listed.rows.map((r) => String(r['id']))).not.toContain(sampleId('s/7', ns));
    // A lone sample after that is written at once (nothing waits for a fuller request).
    await writer.write({
      id: sampleId('late', ns),
      sourceKey: 'late',
      data: Buffer.from('late'),
      label: 1,
      metadata: { n: 1 },
    });
    // A fresh writer answers from what it was given, without asking the database.
    expect(await writer.exists(sampleId('late', ns))).toBe(true);
    expect(await writer.exists(sampleId('never', ns))).toBe(false);
    const late = await client.execute(
      `SELECT id FROM ${ks}.metadata WHERE id = ?`,
      [sampleId('late', ns)],
      {
        prepare: true,
      },
    );
    expect(late.rowLength).toBe(1);
  });
});
