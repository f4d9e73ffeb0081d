/** The legs of `bench tls`, in the order the table lists them. */
export const TLS_LEG_NAMES = ['plaintext', 'grpc-tls', 'db-tls', 'both-tls', 'full'] as const;

/** One leg's name. */
export type TlsLegName = (typeof TLS_LEG_NAMES)[number];

/** How a leg's trainer reaches the loader, and the loader the database. */
export interface TlsLegSpec {
  name: TlsLegName;
  /** gRPC leg: plain text, TLS (server certificate), or mTLS with a bearer token checked. */
  grpc: 'plain' | 'tls' | 'mtls-token';
  /** Database leg: plain text or TLS (to the same node, which accepts both). */
  db: 'plain' | 'tls';
}

/**
 * The legs: plaintext on both legs (the reference), TLS on the gRPC leg only, on the database
 * leg only, on both, and `full` (both, with mTLS and a bearer token checked on every call: the
 * production set-up). @internal
 */
export const TLS_LEGS: readonly TlsLegSpec[] = [
  { name: 'plaintext', grpc: 'plain', db: 'plain' },
  { name: 'grpc-tls', grpc: 'tls', db: 'plain' },
  { name: 'db-tls', grpc: 'plain', db: 'tls' },
  { name: 'both-tls', grpc: 'tls', db: 'tls' },
  { name: 'full', grpc: 'mtls-token', db: 'tls' },
];

/** A leg's row label in the table. @internal */
export function tlsLegLabel(leg: TlsLegSpec): string {
  const grpc = { plain: 'gRPC plain', tls: 'gRPC TLS', 'mtls-token': 'gRPC mTLS + token' }[
    leg.grpc
  ];
  return `${grpc}, database ${leg.db === 'tls' ? 'TLS' : 'plain'}`;
}
