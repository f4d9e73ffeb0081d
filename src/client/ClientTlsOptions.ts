/**
 * TLS settings of a {@link LoaderClient}. Each value is PEM: a Buffer or string holding it
 * (text that contains `-----BEGIN`), or else a string taken as the path of a PEM file, read
 * once when the client is made.
 */
export interface ClientTlsOptions {
  /** CA bundle the server's certificate must chain to. Default: the system's roots. */
  ca?: Buffer | string;
  /** Client certificate chain, for a server that requires mTLS; needs `key`. */
  cert?: Buffer | string;
  /** The client certificate's private key; needs `cert`. */
  key?: Buffer | string;
  /**
   * Name the server's certificate must carry, when it differs from the host of the address
   * (e.g. connecting by IP). Default: the address's host.
   */
  serverName?: string;
}

/**
 * A bearer token: the token itself, or a function called before every call (each
 * reconnection of a stream included), so a token can be rotated while the client lives.
 */
export type TokenSource = string | (() => string | Promise<string>);
