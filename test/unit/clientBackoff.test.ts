import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../src/client/backoff.js';
import { channelOptions } from '../../src/client/channelOptions.js';
import { ClientError } from '../../src/client/ClientError.js';
import { isRetryable } from '../../src/client/isRetryable.js';
import { toClientError } from '../../src/client/toClientError.js';

const PATH = '/scylla_loader.v1.LoaderService/StreamBatches';
const options = { initialBackoffMs: 100, maxBackoffMs: 5000 };

describe('backoffDelay', () => {
  it('doubles from the initial delay, within [ceiling / 2, ceiling]', () => {
    for (const [attempt, ceiling] of [
      [1, 100],
      [2, 200],
      [3, 400],
      [6, 3200],
    ] as const) {
      expect(backoffDelay(attempt, options, () => 0)).toBe(ceiling / 2);
      expect(backoffDelay(attempt, options, () => 0.999999)).toBe(ceiling);
      for (let i = 0; i < 100; i++) {
        const d = backoffDelay(attempt, options);
        expect(d).toBeGreaterThanOrEqual(ceiling / 2);
        expect(d).toBeLessThanOrEqual(ceiling);
      }
    }
  });

  it('never exceeds the maximum, however many attempts', () => {
    for (const attempt of [7, 10, 100, 2000]) {
      expect(backoffDelay(attempt, options, () => 0.999999)).toBe(5000);
      expect(backoffDelay(attempt, options, () => 0)).toBe(2500);
    }
  });
});

describe('isRetryable', () => {
  const error = (code: status, details: string): ClientError =>
    new ClientError(PATH, code, details);

  it('resumes after a dropped connection, a shutdown or a transport reset', () => {
    expect(isRetryable(error(status.UNAVAILABLE, 'Connection dropped'), true)).toBe(true);
    expect(isRetryable(error(status.CANCELLED, 'Call cancelled'), true)).toBe(true);
    const rst = 'Received RST_STREAM with code 2 (Internal server error)';
    expect(isRetryable(error(status.INTERNAL, rst), true)).toBe(true);
  });

  it('never resumes after an error about the request', () => {
    for (const code of [
      status.INVALID_ARGUMENT,
      status.NOT_FOUND,
      status.DATA_LOSS,
      status.DEADLINE_EXCEEDED,
      status.PERMISSION_DENIED,
      status.UNKNOWN,
      status.FAILED_PRECONDITION,
    ]) {
      expect(isRetryable(error(code, 'x'), true)).toBe(false);
    }
    expect(isRetryable(error(status.INTERNAL, 'checksum mismatch'), true)).toBe(false);
    expect(isRetryable(error(status.CANCELLED, 'Cancelled on client'), true)).toBe(false);
  });

  it('resumes after RESOURCE_EXHAUSTED only when allowed, and not after an oversized message', () => {
    const admission = error(status.RESOURCE_EXHAUSTED, 'too many streams (limit 64)');
    expect(isRetryable(admission, true)).toBe(true);
    expect(isRetryable(admission, false)).toBe(false);
    const size = 'Received message larger than max (300000000 vs 272629760)';
    expect(isRetryable(error(status.RESOURCE_EXHAUSTED, size), true)).toBe(false);
  });
});

describe('ClientError', () => {
  it('names the method path and the code', () => {
    const e = new ClientError(PATH, status.UNAVAILABLE, 'Connection dropped');
    expect(e.message).toBe(`${PATH} UNAVAILABLE: Connection dropped`);
    expect(e).toMatchObject({ code: 14, codeName: 'UNAVAILABLE', path: PATH, name: 'ClientError' });
    expect(e).toBeInstanceOf(Error);
  });

  it('wraps grpc-js status errors and nothing else', () => {
    const grpcError = Object.assign(new Error('14 UNAVAILABLE: x'), { code: 14, details: 'x' });
    const wrapped = toClientError(grpcError, PATH) as ClientError;
    expect(wrapped).toBeInstanceOf(ClientError);
    expect(wrapped.cause).toBe(grpcError);
    const bug = new TypeError('oops');
    expect(toClientError(bug, PATH)).toBe(bug);
    expect(toClientError(wrapped, PATH)).toBe(wrapped);
  });
});

describe('channelOptions', () => {
  it('sets a 64 MiB flow-control window and a receive limit above 256 MiB by default', () => {
    const o = channelOptions({});
    expect(o['grpc-node.flow_control_window']).toBe(64 * 1024 * 1024);
    expect(o['grpc.max_receive_message_length']).toBeGreaterThan(256 * 1024 * 1024);
    expect(o['grpc.keepalive_time_ms']).toBe(30_000);
    expect(o['grpc.initial_reconnect_backoff_ms']).toBe(100);
    expect(o['grpc.max_reconnect_backoff_ms']).toBe(5000);
  });

  it('takes the window, limits, keepalive and raw overrides from the options', () => {
    const o = channelOptions({
      flowControlWindow: 1 << 20,
      maxReceiveMessageLength: 1000,
      keepalive: { timeMs: 5000, timeoutMs: 1000, permitWithoutCalls: true },
      reconnect: { initialBackoffMs: 10, maxBackoffMs: 20 },
      channelOptions: { 'grpc.keepalive_time_ms': 7000 },
    });
    expect(o).toMatchObject({
      'grpc-node.flow_control_window': 1 << 20,
      'grpc.max_receive_message_length': 1000,
      'grpc.keepalive_time_ms': 7000,
      'grpc.keepalive_timeout_ms': 1000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.initial_reconnect_backoff_ms': 10,
      'grpc.max_reconnect_backoff_ms': 20,
    });
  });
});
