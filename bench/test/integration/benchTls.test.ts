import { describe, expect, it } from 'vitest';
import type { TlsBenchReport } from '../../tls/runTlsBench.js';
import { TLS_LEG_NAMES } from '../../tls/tlsLegs.js';
import { isPortOpen } from '../../../src/devdb/index.js';
import { benchHarness } from './benchHarness.js';

// The benchmark's own node, on an address of its own: neither the shared node (127.0.0.1) nor
// the security tests' (127.0.0.31) nor a `bench tls` run by hand (127.0.0.41).
const ADDRESS = '127.0.0.43';
const bench = benchHarness('tls');
describe('bench tls --quick', () => {
  // Figures only: the goal is printed, never asserted here.
  it(
    'runs every leg on one node through the CLI, prints positive figures for each, and leaves no node behind',
    { timeout: 600_000 },
    async () => {
      const result = await bench.run<TlsBenchReport>('tls', ['--node-address', ADDRESS], {
        dataset: false,
        outDir: false,
        // Set by the shell of whoever runs the tests, they would mix in; the bench sets its own.
        env: {
          SCYLLA_LOADER_DB_TLS_CA: '/nonexistent/ca.pem',
          SCYLLA_LOADER_TLS_CERT: '/nonexistent/cert.pem',
        },
      });

      const rows = result.stdout
        .split('\n')
        .filter((l) => l.startsWith('| ') && !l.startsWith('| leg'))
        .map((l) =>
          l
            .split('|')
            .slice(1, -1)
            .map((c) => c.trim()),
        );
      expect(rows.map((r) => r[0]!.split(' ')[0])).toEqual([...TLS_LEG_NAMES]);
      const plain = Number.parseFloat(rows[0]![1]!);
      for (const cells of rows) {
        // MB/s, samples/s, loader, client and database CPU s/GB, ratio to plaintext: the
        // bench started the node, so it knows its pid and the database's figure is there too.
        for (let i = 1; i <= 6; i++) {
          expect(Number.parseFloat(cells[i]!), `${cells[0]} column ${i}`).toBeGreaterThan(0);
        }
        // The ratio is the leg's MB/s over plaintext's (as printed, so to their rounding).
        const ratio = Number.parseFloat(cells[1]!) / plain;
        expect(Math.abs(Number.parseFloat(cells[6]!) - ratio), cells[0]).toBeLessThan(
          0.02 * ratio + 0.01,
        );
      }
      expect(rows[0]![6]).toBe('1.00');
      for (const leg of TLS_LEG_NAMES.slice(1)) {
        expect(result.stdout).toMatch(
          new RegExp(
            `^- ${leg} \\(.+\\): \\d+\\.\\d\\d of plaintext \\(goal >= 0\\.9: (met|not met)\\)$`,
            'm',
          ),
        );
      }

      const { report } = result;
      expect(report.runs).toHaveLength(TLS_LEG_NAMES.length);
      for (const run of report.runs) {
        // Every sample of the epoch arrived, over each combination of TLS and plaintext.
        expect(run.samples).toBe(300);
        expect(run.bytes).toBe(report.dataset.totalBytes);
      }
      // The temporary node was stopped (and its folder removed) at the end.
      expect(await isPortOpen(ADDRESS, 9042)).toBe(false);
    },
  );
});
