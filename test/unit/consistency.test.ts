import cassandra from 'cassandra-driver';
import { describe, expect, it } from 'vitest';
import {
  consistencyHint,
  consistencyOfError,
  driverConsistency,
  READ_CONSISTENCIES,
  WRITE_CONSISTENCIES,
} from '../../src/core/db/consistency.js';
import { dbConfigSchema } from '../../src/core/db/dbConfig.js';
import { unavailable } from '../../src/core/errors/LoaderError.js';
import { retryableDriverError } from '../../src/core/db/retryableDriverError.js';

const { consistencies, responseErrorCodes } = cassandra.types;

function unavailableAt(level: number): cassandra.errors.ResponseError {
  return Object.assign(
    new cassandra.errors.ResponseError(responseErrorCodes.unavailableException, 'Not enough'),
    { consistencies: level, required: 2, alive: 1 },
  );
}

const NAMES = {
  writeConsistency: '--write-consistency (W)',
  readConsistency: '--read-consistency (R)',
  sampleReadConsistency: '--sample-read-consistency (S)',
};

describe('consistency settings', () => {
  it('default to LOCAL_QUORUM writes and reads, LOCAL_ONE sample reads', () => {
    expect(dbConfigSchema.parse({})).toMatchObject({
      writeConsistency: 'LOCAL_QUORUM',
      readConsistency: 'LOCAL_QUORUM',
      sampleReadConsistency: 'LOCAL_ONE',
    });
    expect(() => dbConfigSchema.parse({ readConsistency: 'EACH_QUORUM' })).toThrow();
    expect(() => dbConfigSchema.parse({ writeConsistency: 'ANY' })).toThrow();
  });

  it('map every level to the driver code of the same name', () => {
    expect(driverConsistency('LOCAL_QUORUM')).toBe(consistencies.localQuorum);
    expect(driverConsistency('LOCAL_ONE')).toBe(consistencies.localOne);
    expect(driverConsistency('EACH_QUORUM')).toBe(consistencies.eachQuorum);
    for (const level of [...WRITE_CONSISTENCIES, ...READ_CONSISTENCIES]) {
      expect(consistencyOfError(unavailableAt(driverConsistency(level)))).toBe(level);
    }
  });

  it('name the setting whose level found too few replicas, through a LoaderError cause', () => {
    const levels = {
      writeConsistency: 'TWO',
      readConsistency: 'LOCAL_QUORUM',
      sampleReadConsistency: 'LOCAL_ONE',
    };
    const err = unavailableAt(consistencies.two);
    expect(retryableDriverError(err)).toMatch(/replicas are alive for consistency TWO/);
    expect(consistencyHint(err, levels, NAMES)).toBe(
      '; consistency TWO is set by --write-consistency (W)',
    );
    expect(consistencyHint(unavailable('wrapped', err), levels, NAMES)).toBe(
      '; consistency TWO is set by --write-consistency (W)',
    );
    const both = { ...levels, writeConsistency: 'LOCAL_QUORUM' };
    expect(consistencyHint(unavailableAt(consistencies.localQuorum), both, NAMES)).toBe(
      '; consistency LOCAL_QUORUM is set by --write-consistency (W) and --read-consistency (R)',
    );
    // With one host left to try, the driver reports the answer inside NoHostAvailableError.
    const noHost = new cassandra.errors.NoHostAvailableError({ '10.0.0.1:9042': err });
    expect(retryableDriverError(noHost)).toMatch(/replicas are alive for consistency TWO/);
    expect(consistencyHint(noHost, levels, NAMES)).toBe(
      '; consistency TWO is set by --write-consistency (W)',
    );
    expect(consistencyHint(unavailableAt(consistencies.all), levels, NAMES)).toBe('');
    expect(consistencyHint(new Error('other'), levels, NAMES)).toBe('');
  });
});
