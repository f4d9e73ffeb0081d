import type { ZodError } from 'zod';

/**
 * The message of a request the core's validators refused: `invalid request: ` and each issue
 * as `<field path>: <what is wrong>`, e.g. `invalid request: filters.0.min: range min 5 is above
 * max 1, so no sample would pass`. The server sends it with INVALID_ARGUMENT, and the SDK
 * throws the same text when it refuses a request before sending it.
 */
export function describeInvalidRequest(err: ZodError): string {
  const issues = err.issues.map((i) => `${i.path.join('.') || 'request'}: ${i.message}`);
  return `invalid request: ${issues.join('; ')}`;
}
