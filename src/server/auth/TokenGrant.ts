import type { Role } from './tokensFileSchema.js';

/** A token's grant as the loader holds it: its hash as bytes, ready for comparison. */
export interface TokenGrant {
  name: string;
  /** SHA-256 of the token (32 bytes). */
  digest: Buffer;
  role: Role;
  /** Dataset names it may touch; `*` grants every dataset. */
  datasets: ReadonlySet<string>;
}
