import { z } from 'zod';
import { type SettingNames, settingName } from '../config/settingNames.js';
import { readConsistencySchema, writeConsistencySchema } from './consistency.js';

/** The fields of {@link dbTlsConfigSchema}, without the check that pairs certificate and key. */
const dbTlsFields = z.object({
  /** PEM file of the CA(s) that signed the nodes' certificates; absent: the system's CAs. */
  caFile: z.string().min(1).optional(),
  /** PEM client certificate, for clusters that require one (with `keyFile`). */
  certFile: z.string().min(1).optional(),
  /** PEM private key of `certFile`. */
  keyFile: z.string().min(1).optional(),
  /** Whether a node's certificate must name the address it is reached at (default true). */
  verifyHostname: z.boolean().default(true),
});

/**
 * TLS to the database: which CA to trust, an optional client certificate, host name checks. A
 * certificate without its key (or the reverse) is refused naming both settings as `names` does
 * (the CLI: its flags and variables; default: the fields, `tls.certFile` and `tls.keyFile`).
 */
export function dbTlsConfigSchemaNaming(names?: SettingNames) {
  return dbTlsFields.refine((t) => (t.certFile === undefined) === (t.keyFile === undefined), {
    message:
      'a client certificate needs its key and the reverse: set both ' +
      `${settingName(names, 'tls.certFile')} and ${settingName(names, 'tls.keyFile')}, or neither`,
  });
}

/** TLS to the database, refusals naming the fields (see {@link dbTlsConfigSchemaNaming}). */
export const dbTlsConfigSchema = dbTlsConfigSchemaNaming();

/** Validated TLS settings of the database connection. */
export type DbTlsConfig = z.infer<typeof dbTlsConfigSchema>;

/**
 * How to reach the database cluster. When `contactPoints` is empty the CLI uses the local
 * development node started by `scylla-loader db start` instead. A refusal that names a setting
 * names it as `names` does (default: its field).
 */
export function dbConfigSchemaNaming(names?: SettingNames) {
  return z.object({
    contactPoints: z.array(z.string().min(1)).default([]),
    port: z.number().int().min(1).max(65535).default(9042),
    localDataCenter: z.string().min(1).default('datacenter1'),
    username: z.string().optional(),
    /** A secret: never logged (see the configuration `serve` prints) nor put in messages. */
    password: z.string().optional(),
    /** TLS to the nodes; absent: plaintext. */
    tls: dbTlsConfigSchemaNaming(names).optional(),
    /** Connections the driver opens to each host (many, for high-latency links). */
    connectionsPerHost: z.number().int().min(1).max(64).default(4),
    /** Per-request timeout in milliseconds. */
    requestTimeoutMs: z.number().int().min(100).default(12_000),
    /**
     * How long opening one connection (TCP, TLS, the CQL handshake) may take, and the driver's
     * own requests (topology). While a node's connections are all broken the driver has it down
     * and tries one connection at a time, so an attempt lost in a network fault holds the node
     * down this long after the fault ends.
     */
    connectTimeoutMs: z.number().int().min(500).max(120_000).default(3_000),
    /**
     * Consistency of ingest and split writes. LOCAL_QUORUM: a sample acknowledged to a client,
     * or a split set stored, survives the loss of any one replica of the local datacenter
     * (replication 3), and a LOCAL_QUORUM read finds it.
     */
    writeConsistency: writeConsistencySchema.default('LOCAL_QUORUM'),
    /**
     * Consistency of metadata, dataset info and split reads (existence checks of ingest, counts,
     * split creation and loading). LOCAL_QUORUM with LOCAL_QUORUM writes: a read sees every
     * acknowledged write, so a split made right after an ingest lists all of it.
     */
    readConsistency: readConsistencySchema.default('LOCAL_QUORUM'),
    /**
     * Consistency of sample reads, the hot path. LOCAL_ONE: one replica's answer, the fastest,
     * a slow replica hedged by a second read; a sample's row never changes once its metadata
     * row lists it, so any replica holding it has the right bytes.
     */
    sampleReadConsistency: readConsistencySchema.default('LOCAL_ONE'),
  });
}

/** How to reach the database cluster, refusals naming the fields (see {@link dbConfigSchemaNaming}). */
export const dbConfigSchema = dbConfigSchemaNaming();

/** Validated database settings. */
export type DbConfig = z.infer<typeof dbConfigSchema>;
