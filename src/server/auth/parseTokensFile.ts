import { invalidArgument } from '../../core/index.js';
import type { TokenGrant } from './TokenGrant.js';
import { tokensFileSchema } from './tokensFileSchema.js';

/**
 * Parses the text of a tokens file into grants, or throws INVALID_ARGUMENT naming the file and
 * each bad field (e.g. `tokens[2].role`). Nothing of the file's content is quoted, not even
 * the JSON parser's own message (V8 quotes the text around the error), because a file that
 * is not what it should be may hold a token instead of a hash.
 *
 * Two entries with the same name or the same hash are refused: a name must identify one
 * token in logs, and one token cannot have two grants.
 */
export function parseTokensFile(text: string, file: string): TokenGrant[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalidArgument(
      `tokens file ${file} is not valid JSON; expected ` +
        '{"tokens": [{"name": ..., "sha256": ..., "role": "reader"|"writer"|"admin", "datasets": [...]}]}',
    );
  }
  const parsed = tokensFileSchema.safeParse(json);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${fieldPath(i.path)}: ${i.message}`);
    throw invalidArgument(`invalid tokens file ${file}\n${lines.join('\n')}`);
  }
  const names = new Set<string>();
  const hashes = new Set<string>();
  return parsed.data.tokens.map((entry, i) => {
    if (names.has(entry.name)) {
      throw invalidArgument(
        `invalid tokens file ${file}: tokens[${i}].name "${entry.name}" is used twice; ` +
          'give every token its own name',
      );
    }
    if (hashes.has(entry.sha256)) {
      throw invalidArgument(
        `invalid tokens file ${file}: tokens[${i}] ("${entry.name}") has the same sha256 as ` +
          'an earlier entry; one token has one grant',
      );
    }
    names.add(entry.name);
    hashes.add(entry.sha256);
    return {
      name: entry.name,
      digest: Buffer.from(entry.sha256, 'hex'),
      role: entry.role,
      datasets: new Set(entry.datasets),
    };
  });
}

/** `tokens.2.role` → `tokens[2].role`. */
function fieldPath(path: PropertyKey[]): string {
  if (path.length === 0) return '(file)';
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`))
    .join('');
}
