import { readFileSync } from 'node:fs';
import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { ClientError } from '../../src/client/ClientError.js';
import { isRetryable, retryRules } from '../../src/client/isRetryable.js';

// The table ships in the Python package; the TypeScript SDK compiles a verbatim copy (the
// Docker build and tsc see only src/).
const SHARED = new URL('../../clients/python/src/scylla_loader/retry_rules.json', import.meta.url);
const COPY = new URL('../../src/client/retryRules.json', import.meta.url);

interface Case {
  code: keyof typeof status;
  details: string;
  retryOnResourceExhausted?: boolean;
  expected: boolean;
}

const table = JSON.parse(readFileSync(SHARED, 'utf8')) as { rules: unknown[]; cases: Case[] };

describe('retry rules', () => {
  it('compiles an up-to-date copy of the shared table', () => {
    expect(
      readFileSync(COPY, 'utf8'),
      'copy clients/python/src/scylla_loader/retry_rules.json to src/client/retryRules.json',
    ).toBe(readFileSync(SHARED, 'utf8'));
    expect(retryRules).toHaveLength(table.rules.length);
  });

  it.each(table.cases)('$code "$details" -> $expected', (c) => {
    const error = new ClientError(
      '/scylla_loader.v1.LoaderService/StreamBatches',
      status[c.code],
      c.details,
    );
    expect(isRetryable(error, c.retryOnResourceExhausted ?? true)).toBe(c.expected);
  });
});
