import { status } from '@grpc/grpc-js';
import type { ClientError } from './ClientError.js';
import table from './retryRules.json' with { type: 'json' };

/**
 * One rule of `retryRules.json`: a status code, optionally a test of its details, and what to
 * do.
 *
 * @internal
 */
export interface RetryRule {
  readonly code: status;
  readonly detail?: {
    readonly prefix?: string;
    readonly contains?: string;
    readonly equals?: string;
  };
  readonly retry: boolean | 'when-resource-exhausted-allowed';
}

/** The rules of the table, in order, checked once when the module loads. @internal */
export const retryRules: readonly RetryRule[] = table.rules.map(toRetryRule);

function toRetryRule(row: {
  code: string;
  detail?: RetryRule['detail'];
  retry: boolean | string;
}): RetryRule {
  const code = status[row.code as keyof typeof status];
  const kinds = Object.keys(row.detail ?? {});
  if (
    typeof code !== 'number' ||
    (row.retry !== true &&
      row.retry !== false &&
      row.retry !== 'when-resource-exhausted-allowed') ||
    kinds.length > 1 ||
    kinds.some((kind) => kind !== 'prefix' && kind !== 'contains' && kind !== 'equals')
  ) {
    throw new Error(`retryRules.json: bad rule ${JSON.stringify(row)}`);
  }
  return { code, detail: row.detail, retry: row.retry };
}

function matches(rule: RetryRule, code: status, details: string): boolean {
  if (rule.code !== code) return false;
  const { prefix, contains, equals } = rule.detail ?? {};
  if (prefix !== undefined) return details.startsWith(prefix);
  if (contains !== undefined) return details.includes(contains);
  if (equals !== undefined) return details === equals;
  return true;
}

/**
 * Whether a broken stream is worth resuming from its last token: only statuses that say the
 * connection or the loader went away, never one about the request itself (INVALID_ARGUMENT,
 * NOT_FOUND, DATA_LOSS, DEADLINE_EXCEEDED, UNAUTHENTICATED...), which a new call would meet
 * again. The caller checks first whether it cancelled the call itself.
 *
 * Decided by the first matching rule of `retryRules.json`, the table the Python SDK ships too
 * (each rule says why): UNAVAILABLE; CANCELLED unless grpc itself says this process cancelled
 * the call (grpc-js reports a server's `forceShutdown()` as CANCELLED "Call cancelled");
 * INTERNAL from an HTTP/2 RST_STREAM; RESOURCE_EXHAUSTED when `retryOnResourceExhausted` (the
 * loader's admission limit), except the message size limits. Anything else is not retried.
 *
 * @internal
 */
export function isRetryable(error: ClientError, retryOnResourceExhausted: boolean): boolean {
  const rule = retryRules.find((r) => matches(r, error.code, error.details));
  if (rule === undefined) return false;
  return rule.retry === 'when-resource-exhausted-allowed' ? retryOnResourceExhausted : rule.retry;
}
