import { timingSafeEqual } from 'node:crypto';
import { hashToken } from './hashToken.js';
import type { TokenGrant } from './TokenGrant.js';

/**
 * The grant of a presented token, or undefined for an unknown one. The token is hashed and
 * the hash compared with every entry's in constant time, without stopping at a match, so how
 * long a lookup takes says neither how much of a guess was right nor which entry matched.
 * (Hashing first also makes every comparison the same length.)
 */
export function findToken(grants: readonly TokenGrant[], token: string): TokenGrant | undefined {
  const digest = hashToken(token);
  let found: TokenGrant | undefined;
  for (const grant of grants) {
    // Non-short-circuit: the comparison runs for every entry, matched or not.
    const same = timingSafeEqual(grant.digest, digest);
    if (same && found === undefined) found = grant;
  }
  return found;
}
