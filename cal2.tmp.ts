import { mkdtempSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SampleCache, cacheKey, cacheScope, createLoaderMetrics } from './src/core/index.js';
const scope = cacheScope('ds', 'g');
const bytes = Number(process.argv[2] ?? 52000);
const dir = mkdtempSync(path.join(os.tmpdir(), 'cal-'));
const bound = 16 << 20;
const m = createLoaderMetrics();
const c = SampleCache.open({ cacheMemoryBytes: 0, cacheDir: dir, cacheDiskBytes: bound }, m, (e) => console.log('ERR', e))!;
const disk = (c as any).disk;
const origStore = disk.store.bind(disk);
let maxT = 0, txns = 0, tot = 0;
disk.store = (batch: unknown[]) => { const t = performance.now(); const r = origStore(batch); const d = performance.now() - t; maxT = Math.max(maxT, d); txns++; tot += d; return r; };
const t0 = performance.now();
let maxFile = 0;
for (let i = 0; i < 1280 * 2; i++) {
  const id = Buffer.alloc(16); id.writeUInt32BE(i);
  c.fill(cacheKey(scope, id), { label: 1, labelBlob: null, data: Buffer.alloc(bytes, 1) });
  if (i % 4 === 0) await sleep(1);
  if (i % 64 === 0) maxFile = Math.max(maxFile, statSync(path.join(dir, 'samples', 'data.mdb')).size);
}
await c.settled();
console.log(JSON.stringify({ s: (performance.now() - t0) / 1000, txns, maxT, meanT: tot / txns, maxFileMiB: maxFile / 2 ** 20, fileMiB: statSync(path.join(dir, 'samples', 'data.mdb')).size / 2 ** 20, dropped: (await m.cacheWritesDropped.get()).values[0]!.value, target: disk.readTarget(), inflation: disk.inflation, budgetMiB: disk.budget / 2 ** 20 }));
