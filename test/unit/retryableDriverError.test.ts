import cassandra from 'cassandra-driver';
import { describe, expect, it } from 'vitest';
import { retryableDriverError } from '../../src/core/db/retryableDriverError.js';

const { errors, types } = cassandra;
const codes = types.responseErrorCodes;
const HOST = '10.1.2.3:9042';

/** A socket error as Node raises it: an Error with an errno code. */
function socketError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`connect ${code} ${HOST}`), { code, syscall: 'connect' });
}

describe('retryableDriverError', () => {
  it('describes every error a later attempt can cure, without the hosts', () => {
    const retryable: Array<[Error, RegExp]> = [
      [
        new errors.NoHostAvailableError({ [HOST]: socketError('ECONNREFUSED') }),
        /no database host/,
      ],
      [new errors.OperationTimedOutError('The host did not reply', HOST), /no answer in time/],
      [new errors.BusyConnectionError(HOST, 2048, 1), /connection is busy/],
      // A node killed while a request was on its connection (seen on the ring: CREATE KEYSPACE).
      [
        Object.assign(
          new (errors.DriverError as unknown as new (m: string) => Error)('Socket was closed'),
          {
            isSocketError: true,
            innerError: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
          },
        ),
        /closed the connection \(ECONNRESET\)/,
      ],
      [
        Object.assign(
          new (errors.DriverError as unknown as new (m: string) => Error)('Socket was closed'),
          { isSocketError: true },
        ),
        /connection to a database node closed/,
      ],
      [
        new errors.ResponseError(codes.unavailableException, 'Cannot achieve'),
        /replicas are alive/,
      ],
      [new errors.ResponseError(codes.overloaded, 'Overloaded'), /overloaded/],
      [new errors.ResponseError(codes.isBootstrapping, 'Bootstrapping'), /bootstrapping/],
      [new errors.ResponseError(codes.readTimeout, 'Operation timed out'), /timed out on a read/],
      [new errors.ResponseError(codes.writeTimeout, 'Operation timed out'), /timed out on a write/],
      [new errors.ResponseError(codes.readFailure, 'Operation failed'), /failed a read/],
      [socketError('ECONNRESET'), /ECONNRESET/],
      [socketError('ECONNREFUSED'), /ECONNREFUSED/],
      [socketError('EPIPE'), /EPIPE/],
    ];
    for (const [err, text] of retryable) {
      const description = retryableDriverError(err);
      expect(description, err.message).toMatch(text);
      expect(description).not.toContain('10.1.2.3');
    }
  });

  it('leaves out what a retry cannot cure, and anything that is not a database error', () => {
    const notRetryable: unknown[] = [
      // A mutation too large for the commit log fails the same way every time.
      new errors.ResponseError(codes.writeFailure, 'Operation failed - received 0 responses'),
      // The loader never truncates: one would be a bug.
      new errors.ResponseError(codes.truncateError, 'Truncate failed'),
      new errors.ResponseError(codes.syntaxError, "line 1:7 no viable alternative at input 'FORM'"),
      new errors.ResponseError(codes.invalid, 'Undefined column name nope'),
      new errors.ResponseError(codes.unauthorized, 'User has no SELECT permission'),
      new errors.ResponseError(codes.serverError, 'java.lang.AssertionError'),
      new errors.ArgumentError('Not a valid blob, expected Buffer obtained 42'),
      new TypeError("Cannot read properties of undefined (reading 'rows')"),
      Object.assign(new Error('no such file'), { code: 'ENOENT' }),
      'a string',
      undefined,
      null,
    ];
    for (const err of notRetryable) expect(retryableDriverError(err), String(err)).toBeUndefined();
  });
});
