/** Where the loader's TLS material is (PEM files). */
export interface TlsFilePaths {
  /** Server certificate chain. */
  certFile: string;
  /** The certificate's private key. */
  keyFile: string;
  /** CA bundle client certificates must chain to; set, it turns on mTLS. */
  clientCaFile?: string | undefined;
}

/** The content of the TLS files, checked: the key matches the certificate. */
export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  clientCa?: Buffer | undefined;
}
