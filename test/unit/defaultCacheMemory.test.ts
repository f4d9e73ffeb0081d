import { describe, expect, it } from 'vitest';
import {
  PRIMARY_BYTES,
  WORKER_BASE_BYTES,
  defaultCacheMemoryBytes,
  readMemoryFacts,
} from '../../src/server/config/defaultCacheMemory.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const bounds = { maxHeldBytes: GiB, idCacheBytes: 512 * MiB };

describe('defaultCacheMemoryBytes', () => {
  it('takes an eighth of a host without a container limit, split between the workers', () => {
    const one = defaultCacheMemoryBytes({ hostBytes: 24 * GiB }, 1, bounds);
    expect(one.bytes).toBe(3 * GiB);
    expect(one.derivation).toBe(
      "an eighth of the host's 24,576 MiB (no container memory limit): 3,072 MiB",
    );
    const two = defaultCacheMemoryBytes({ hostBytes: 24 * GiB }, 2, bounds);
    expect(two.bytes).toBe(1.5 * GiB);
    expect(two.derivation).toContain('split between 2 workers: 1,536 MiB each');
  });

  it('takes a quarter of a worker share under a container limit when its bounds leave room', () => {
    // 16 GiB, 2 workers: shares of (16 GiB - primary) / 2, a quarter each.
    const d = defaultCacheMemoryBytes({ hostBytes: 256 * GiB, limitBytes: 16 * GiB }, 2, bounds);
    const share = (16 * GiB - PRIMARY_BYTES) / 2;
    expect(d.bytes).toBe(Math.floor(share / 4 / MiB) * MiB);
    expect(d.derivation).toContain("of the container's 16,384 MiB memory limit");
  });

  it('never takes a worker past its share: what base, held bytes and id cache leave, or none', () => {
    // 2 GiB, 1 worker: 2048 - 160 - 1024 - 512 = 352 MiB, less than a quarter (512).
    const tight = defaultCacheMemoryBytes({ hostBytes: 64 * GiB, limitBytes: 2 * GiB }, 1, bounds);
    expect(tight.bytes).toBe(2 * GiB - WORKER_BASE_BYTES - GiB - 512 * MiB);
    expect(tight.bytes + WORKER_BASE_BYTES + GiB + 512 * MiB).toBeLessThanOrEqual(2 * GiB);
    // 1 GiB cannot even hold the bounds: no memory tier.
    const none = defaultCacheMemoryBytes({ hostBytes: 64 * GiB, limitBytes: GiB }, 1, bounds);
    expect(none.bytes).toBe(0);
    expect(none.derivation).toMatch(/: 0 MiB$/);
  });

  it('reads a limit only when it is below the host memory', () => {
    const facts = readMemoryFacts();
    expect(facts.hostBytes).toBeGreaterThan(0);
    if (facts.limitBytes !== undefined) expect(facts.limitBytes).toBeLessThan(facts.hostBytes);
  });
});
