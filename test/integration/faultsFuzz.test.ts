import { describe, expect, it } from 'vitest';
import { runFuzzBench } from '../faults/fuzz/runFuzzBench.js';
import { testDbConfig } from '../support/dbHelpers.js';

const MIB = 2 ** 20;

/**
 * The right statuses of each class of generated input, as the loader promises them
 * (docs/user-guide.md#streaming, Errors; src/server/rpc validation). The generators make each
 * case from a valid request with one kind of damage, so a status outside its class is a loader
 * bug.
 */
const CLASS_TABLE: Record<string, readonly string[]> = {
  'stream:valid-extremes': ['OK'],
  'stream:batch-size': ['INVALID_ARGUMENT'],
  'stream:rank': ['INVALID_ARGUMENT'],
  'stream:epochs': ['INVALID_ARGUMENT'],
  'stream:prefetch': ['INVALID_ARGUMENT'],
  'stream:enum': ['INVALID_ARGUMENT'],
  'stream:dataset-name': ['INVALID_ARGUMENT'],
  'stream:resume-token': ['INVALID_ARGUMENT'],
  'stream:job-checkpoint': ['INVALID_ARGUMENT'],
  'stream:unknown-dataset': ['NOT_FOUND'],
  'stream:split': ['NOT_FOUND', 'INVALID_ARGUMENT'],
  'stream:transform': ['INVALID_ARGUMENT', 'DATA_LOSS', 'OK'],
  'stream:anything': ['OK', 'INVALID_ARGUMENT', 'NOT_FOUND', 'DATA_LOSS'],
  'stream:oversized': ['RESOURCE_EXHAUSTED'],
  'splits:name': ['INVALID_ARGUMENT'],
  'splits:dataset-name': ['INVALID_ARGUMENT'],
  'splits:unknown-dataset': ['NOT_FOUND'],
  'splits:parts': ['INVALID_ARGUMENT'],
  'splits:folds': ['INVALID_ARGUMENT'],
  'splits:ratios': ['INVALID_ARGUMENT'],
  'splits:enum': ['INVALID_ARGUMENT'],
  'splits:max-total': ['INVALID_ARGUMENT'],
  'splits:columns': ['INVALID_ARGUMENT'],
  'splits:unknown-column': ['INVALID_ARGUMENT', 'NOT_FOUND'],
  'splits:filter-values': ['OK', 'INVALID_ARGUMENT'],
  // Any damage that takes a body over CreateSplits' 1 MiB: refused by size, unread.
  'splits:oversized': ['RESOURCE_EXHAUSTED'],
  'splits:anything': [
    'OK',
    'INVALID_ARGUMENT',
    'NOT_FOUND',
    'ALREADY_EXISTS',
    'RESOURCE_EXHAUSTED',
  ],
  'raw:decodable': ['OK', 'INVALID_ARGUMENT', 'NOT_FOUND', 'DATA_LOSS', 'ALREADY_EXISTS'],
  // A body that does not decode is the client's fault (grpc-js alone would say INTERNAL).
  'raw:undecodable': ['INVALID_ARGUMENT'],
};

describe('faults: fuzzing a spawned serve', () => {
  it(
    'answers every generated request with its class status, survives hostile connections, RSS bounded',
    { timeout: 240_000 },
    async () => {
      const requests = 160;
      const r = await runFuzzBench({
        db: testDbConfig(),
        requests,
        seed: 20261124,
        concurrency: 8,
        connections: { randomBytes: 30, halfOpen: 12, partialCalls: 12, holdMs: 6_000 },
      });
      expect(r.requests).toBe(requests);
      // Every class the generators make is in the table, and every status seen is in its class.
      for (const [kind, k] of Object.entries(r.byKind)) {
        const allowed = CLASS_TABLE[kind];
        expect(allowed, `class ${kind} has no row in the table`).toBeDefined();
        for (const status of Object.keys(k.statuses)) {
          expect(allowed, `${kind} answered ${status}: ${JSON.stringify(r.wrong)}`).toContain(
            status,
          );
        }
      }
      expect(r.wrongCount).toBe(0);
      // The classes that matter most were all exercised.
      for (const kind of [
        'stream:batch-size',
        'stream:resume-token',
        'stream:job-checkpoint',
        'stream:dataset-name',
        'stream:unknown-dataset',
        'splits:unknown-dataset',
        'raw:undecodable',
      ]) {
        expect(r.byKind[kind]?.sent ?? 0, kind).toBeGreaterThan(0);
      }
      // No crash, no INTERNAL from the loader's own code, every worker serving afterwards.
      expect(r.crash).toBeUndefined();
      expect(r.workerDeaths).toBe(0);
      expect(r.internalErrors).toBe(0);
      // Each undecodable body was refused by the loader, and counted.
      expect(r.undecodableRefused).toBe(r.byKind['raw:undecodable']!.sent);
      expect(r.healthzAfter).toBe(200);
      // Normal epochs are whole while hostile connections are held and after.
      expect(r.normalSamplesWhileHeld).toBe(r.datasetSamples);
      expect(r.normalSamplesAfter).toBe(r.datasetSamples);
      expect(r.connections.randomBytes).toBe(30);
      // RSS of all loader processes: back within 100 MiB of where it started, never 256 MiB
      // over it (a few requests carry 1 MB strings, and 2 MB of 'é').
      expect(r.rssAfterBytes - r.rssBeforeBytes).toBeLessThan(100 * MIB);
      expect(r.rssPeakBytes - r.rssBeforeBytes).toBeLessThan(256 * MIB);
      expect(r.fdsAfter - r.fdsBefore).toBeLessThan(24);
    },
  );
});
