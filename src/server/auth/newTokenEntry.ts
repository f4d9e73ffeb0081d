import { invalidArgument } from '../../core/index.js';
import { hashToken } from './hashToken.js';
import { newToken } from './newToken.js';
import { tokenEntrySchema, type TokenEntry } from './tokensFileSchema.js';

/**
 * A new token and the tokens-file entry that grants it: the entry holds the token's hash, so
 * the token itself exists only in what the caller shows once. Invalid grants (name, role,
 * datasets) throw INVALID_ARGUMENT naming the field.
 */
export function newTokenEntry(grant: Omit<TokenEntry, 'sha256'>): {
  token: string;
  entry: TokenEntry;
} {
  const token = newToken();
  const parsed = tokenEntrySchema.safeParse({
    ...grant,
    sha256: hashToken(token).toString('hex'),
  });
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  --${i.path[0]?.toString()}: ${i.message}`);
    throw invalidArgument(`invalid token grant\n${lines.join('\n')}`);
  }
  return { token, entry: parsed.data };
}
