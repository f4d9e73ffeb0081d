import { status } from '@grpc/grpc-js';
import cassandra from 'cassandra-driver';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LoaderError, notFound } from '../../src/core/errors/LoaderError.js';
import { toGrpcStatus } from '../../src/server/errors/toGrpcStatus.js';

const { errors, types } = cassandra;

describe('toGrpcStatus', () => {
  it('keeps a LoaderError code and message, not its cause', () => {
    const err = notFound('dataset "x" does not exist; ingest it first', new Error('secret cql'));
    expect(toGrpcStatus(err)).toEqual({
      code: status.NOT_FOUND,
      details: 'dataset "x" does not exist; ingest it first',
    });
    const exhausted = new LoaderError('RESOURCE_EXHAUSTED', 'batch too large');
    expect(toGrpcStatus(exhausted).code).toBe(status.RESOURCE_EXHAUSTED);
  });

  it('cuts details quoting a huge value, so the status still fits in a trailer', () => {
    // Found by the fuzzer: a 1 MB dataset name was quoted whole; the client never got a status.
    const huge = 'é'.repeat(1_000_000);
    const s = toGrpcStatus(new LoaderError('INVALID_ARGUMENT', `invalid dataset name "${huge}"`));
    expect(s.code).toBe(status.INVALID_ARGUMENT);
    expect(s.details!.length).toBeLessThan(1100);
    expect(s.details).toMatch(/^invalid dataset name "éé.*more characters cut\)$/);
    const pairs = toGrpcStatus(new LoaderError('NOT_FOUND', `x${'😀'.repeat(2000)}`)).details!;
    expect(() => encodeURIComponent(pairs)).not.toThrow();
  });

  it('turns a ZodError into INVALID_ARGUMENT naming each field', () => {
    const schema = z.object({ batchSize: z.number().min(1), split: z.string().min(1) });
    const parsed = schema.safeParse({ batchSize: 0, split: '' });
    expect(parsed.success).toBe(false);
    const s = toGrpcStatus(parsed.error);
    expect(s.code).toBe(status.INVALID_ARGUMENT);
    expect(s.details).toMatch(/^invalid request: /);
    expect(s.details).toContain('batchSize:');
    expect(s.details).toContain('split:');
  });

  it('maps retryable driver errors to UNAVAILABLE without leaking hosts', () => {
    const retryable = [
      new errors.NoHostAvailableError({ '10.1.2.3:9042': new Error('ECONNREFUSED') }),
      new errors.OperationTimedOutError('read timed out', '10.1.2.3:9042'),
      new errors.BusyConnectionError('10.1.2.3:9042', 2048, 1),
      new errors.ResponseError(types.responseErrorCodes.unavailableException, 'Cannot achieve'),
      new errors.ResponseError(types.responseErrorCodes.readTimeout, 'Operation timed out'),
      new errors.ResponseError(types.responseErrorCodes.overloaded, 'Overloaded'),
      new errors.ResponseError(types.responseErrorCodes.writeTimeout, 'Operation timed out'),
      new errors.ResponseError(types.responseErrorCodes.readFailure, 'Operation failed'),
    ];
    for (const err of retryable) {
      const s = toGrpcStatus(err);
      expect(s.code, err.message).toBe(status.UNAVAILABLE);
      expect(s.details).toMatch(/retry with backoff/);
      expect(s.details).not.toContain('10.1.2.3');
    }
    expect(toGrpcStatus(retryable[0]).details).toMatch(/no database host could be reached/);
    expect(toGrpcStatus(retryable[5]).details).toMatch(/overloaded/);
  });

  it('treats non-retryable driver errors as INTERNAL', () => {
    const syntax = new errors.ResponseError(types.responseErrorCodes.syntaxError, 'line 1:7');
    expect(toGrpcStatus(syntax, { streamId: 's1' })).toEqual({
      code: status.INTERNAL,
      details: "internal error; see the loader's log (stream id s1)",
    });
    // The fetch engine's list and this mapping are one list: these are not retried either.
    for (const code of ['truncateError', 'writeFailure'] as const) {
      const err = new errors.ResponseError(types.responseErrorCodes[code], 'failed');
      expect(toGrpcStatus(err).code, code).toBe(status.INTERNAL);
    }
  });

  it('maps an AbortError to CANCELLED', () => {
    const controller = new AbortController();
    controller.abort();
    expect(toGrpcStatus(controller.signal.reason).code).toBe(status.CANCELLED);
    const custom = Object.assign(new Error('aborted'), { name: 'AbortError' });
    expect(toGrpcStatus(custom).code).toBe(status.CANCELLED);
  });

  it('hides unexpected errors behind a generic INTERNAL message with the id', () => {
    const err = new TypeError("Cannot read properties of undefined (reading 'rows')");
    const s = toGrpcStatus(err, { streamId: 'abc123' });
    expect(s).toEqual({
      code: status.INTERNAL,
      details: "internal error; see the loader's log (stream id abc123)",
    });
    expect(toGrpcStatus('a string', { callId: 'c9' }).details).toBe(
      "internal error; see the loader's log (call id c9)",
    );
    expect(toGrpcStatus(undefined)).toEqual({
      code: status.INTERNAL,
      details: "internal error; see the loader's log",
    });
  });
});
