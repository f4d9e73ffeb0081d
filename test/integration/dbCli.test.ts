import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/runCli.js';

// With SCYLLA_LOADER_CONTACT_POINTS set, `db start` only checks that cluster: nothing to refuse.
const local = !process.env.SCYLLA_LOADER_CONTACT_POINTS;

describe.runIf(local)('db start (CLI)', () => {
  it('refuses a second cluster on the running node address with a clear error, not a crash', async () => {
    const stateDir = await mkdtemp(path.join(os.tmpdir(), 'sl-second-cluster-'));
    try {
      const result = await runCli(['db', 'start', '--state-dir', stateDir]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^error: 127\.0\.0\.1:9042 is already in use by a process that is not node 1 of /m,
      );
      expect(result.stderr).toContain('--first-address');
      expect(result.stderr).not.toContain('internal error');
      expect(result.stderr).not.toMatch(/^\s+at /m);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});
