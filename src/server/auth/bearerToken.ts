import type { Metadata } from '@grpc/grpc-js';

/** What a call's metadata says about its token. */
export type BearerToken =
  { kind: 'token'; token: string } | { kind: 'missing' } | { kind: 'malformed' };

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * The token of a call's `authorization: Bearer <token>` metadata. Only the first
 * `authorization` value counts (a proxy that adds its own comes after the client's).
 */
export function bearerToken(metadata: Metadata): BearerToken {
  const value = metadata.get('authorization')[0];
  if (value === undefined) return { kind: 'missing' };
  const match = typeof value === 'string' ? BEARER.exec(value) : null;
  return match?.[1] === undefined ? { kind: 'malformed' } : { kind: 'token', token: match[1] };
}
