import cassandra from 'cassandra-driver';
import { describe, expect, it } from 'vitest';
import { benchLedgerKeyspace, summarizeLedger, valueBytes } from '../../stream/benchLedger.js';
import { localNodetool } from '../../stream/localNodetool.js';
import type { RunRecord } from '../../stream/StreamBenchReport.js';

/** A timed out-of-order run of `scenario` in round `run` at `rate` samples/s. */
function run(scenario: RunRecord['scenario'], round: number, rate: number): RunRecord {
  return {
    placement: 'unpinned',
    scenario,
    phase: 'timed',
    run: round,
    seed: round,
    samples: 1000,
    bytes: 1e8,
    wallSeconds: 1000 / rate,
    samplesPerSecond: rate,
    megabytesPerSecond: rate / 10,
    cpuSeconds: { loader: 1, client: 1 },
  };
}

describe('summarizeLedger', () => {
  it('pairs each job run with the plain run of its round, with the median, lowest and highest', () => {
    const runs = [
      run('service', 0, 1000),
      run('service-ledger', 0, 900),
      run('service', 1, 500),
      run('service-ledger', 1, 490),
      run('service', 2, 800),
      run('service-ledger', 2, 600),
      run('service-in-order-p2', 2, 10),
    ];
    const [row] = summarizeLedger(runs, ['unpinned'], 'imagenet');
    expect(row!.roundRatios).toEqual([0.9, 0.98, 0.75]);
    expect(row!.ratio).toBe(0.9);
    expect(row!.minRatio).toBe(0.75);
    expect(row!.maxRatio).toBe(0.98);
    expect(row!.goal).toBe(0.95);
    expect(row!.meetsGoal).toBe(false);
    expect(row!.job.samplesPerSecond).toBe(600);
    expect(row!.single.samplesPerSecond).toBe(800);
    expect(summarizeLedger(runs, ['unpinned'], 'small')[0]!.goal).toBe(0.9);
    // No job runs: no row.
    expect(summarizeLedger(runs.slice(0, 1), ['unpinned'], 'imagenet')).toEqual([]);
  });
});

describe('valueBytes', () => {
  it('counts each ledger column type as the protocol sends it', () => {
    expect(valueBytes('job-1')).toBe(5);
    expect(valueBytes('é')).toBe(2);
    expect(valueBytes(7)).toBe(4);
    expect(valueBytes(Buffer.alloc(48))).toBe(48);
    expect(valueBytes(cassandra.types.Uuid.random())).toBe(16);
    expect(valueBytes(cassandra.types.TimeUuid.now())).toBe(16);
    expect(valueBytes(new Date())).toBe(8);
    expect(valueBytes(false)).toBe(1);
    expect(valueBytes(null)).toBe(0);
    expect(valueBytes(['a', 'bc'])).toBe(3);
    expect(() => valueBytes({ x: 1 })).toThrow(/unexpected type/);
  });
});

describe('benchLedgerKeyspace', () => {
  it("is the dataset's name with _ledger, within Cassandra's 48 characters", () => {
    expect(benchLedgerKeyspace('bench_photo_small_n30000')).toBe('bench_photo_small_n30000_ledger');
    expect(() => benchLedgerKeyspace('d'.repeat(42))).toThrow(/over 48 characters.*--dataset/);
  });
});

describe('localNodetool', () => {
  it('refuses a process that is not a Cassandra node', async () => {
    await expect(localNodetool(process.pid)).rejects.toThrow(
      `process ${process.pid} is not a Cassandra node`,
    );
  });
});
