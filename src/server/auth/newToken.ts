import { randomBytes } from 'node:crypto';

/**
 * Prefix of every token, so a leaked one is easy to find (secret scanners, `grep slt_`) and
 * easy to tell apart from other credentials.
 */
export const TOKEN_PREFIX = 'slt_';

/** A fresh bearer token: {@link TOKEN_PREFIX} and 32 random bytes in base64url. */
export function newToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}
