import { createHash } from 'node:crypto';

/** SHA-256 of a token's UTF-8 bytes: what the tokens file stores and lookups compare. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
