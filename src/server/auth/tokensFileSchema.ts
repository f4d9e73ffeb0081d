import { z } from 'zod';

/**
 * What a token may do, each role everything the one before it may: `reader` streams and reads;
 * `writer` also writes samples (IngestSamples); `admin` also creates split sets.
 */
export const ROLES = ['reader', 'writer', 'admin'] as const;

/** A token's role (see {@link ROLES}). */
export type Role = (typeof ROLES)[number];

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * One entry of the tokens file. Only the token's SHA-256 is stored, so the file (a Kubernetes
 * Secret) does not hand out working tokens to whoever can read it. Messages never quote a
 * value: a token pasted where its hash belongs must not end up in a log.
 */
export const tokenEntrySchema = z.object({
  /** Who holds the token; named in logs and PERMISSION_DENIED details. */
  name: z.string({ error: 'must be a string' }).regex(/^[A-Za-z0-9][A-Za-z0-9._@:/-]{0,127}$/, {
    error: 'must be 1 to 128 letters, digits or ._@:/- starting with a letter or digit',
  }),
  /** SHA-256 of the token's UTF-8 bytes, 64 lower-case hex digits. */
  sha256: z.string({ error: 'must be a string' }).regex(SHA256_HEX, {
    error:
      'must be the 64 lower-case hex digits of the SHA-256 of the token ' +
      '(`scylla-loader auth new-token` prints the entry), not the token itself',
  }),
  role: z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}` }),
  /** Dataset names the token may touch; `*` is every dataset. */
  datasets: z
    .array(z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }), {
      error: 'must be a list of dataset names or "*"',
    })
    .min(1, { error: 'must name at least one dataset, or "*"' }),
});

/**
 * An object's message for its own issues: unknown keys are refused without naming them (a
 * key could be a token pasted in the wrong place), anything else is the wrong type.
 */
function objectError(expected: string): (issue: { code?: string }) => string {
  return (issue) =>
    issue.code === 'unrecognized_keys'
      ? `has fields it should not; ${expected}`
      : `must be an object; ${expected}`;
}

/** The tokens file: `{ "tokens": [ ... ] }`. */
export const tokensFileSchema = z.strictObject(
  {
    tokens: z.array(
      z.strictObject(tokenEntrySchema.shape, {
        error: objectError('an entry has name, sha256, role and datasets'),
      }),
      { error: 'must be a list' },
    ),
  },
  { error: objectError('the file is {"tokens": [...]}') },
);

/** One entry of the tokens file as written. */
export type TokenEntry = z.infer<typeof tokenEntrySchema>;
