import type { Logger } from 'pino';
import type { ServerConfig } from './config/serverConfig.js';
import type { ServerMetrics } from './metrics/serverMetrics.js';
import type {
  ByteBudget,
  ReadSlots,
  DbPath,
  Ledger,
  ResumeKeys,
  SampleCache,
  SettingNames,
  TransformPool,
} from '../core/index.js';

/** What every RPC handler of a loader process shares. */
export interface ServerContext {
  config: ServerConfig;
  /** The primary route first, then the extra ones. */
  paths: DbPath[];
  metrics: ServerMetrics;
  logger: Logger;
  /** Keys of the resume tokens' HMAC: the first signs, any verifies (key rotation). */
  resumeKey: ResumeKeys;
  /** How the core's messages name the settings a person may change (`serve`'s). */
  settingNames: SettingNames;
  /** The bytes the process's streams hold together, against `--max-held-bytes`. */
  heldBytes: ByteBudget;
  /** The queries the process's streams have in flight together, against `--max-reads-in-flight`. */
  readSlots: ReadSlots;
  /** The process's transform slots, shared by its streams. */
  transforms: TransformPool;
  /** The training ledger (`--ledger-keyspace`): streams naming a job record into it. */
  ledger: Ledger;
  /** The process's sample cache, shared by its streams (absent: none configured). */
  sampleCache?: SampleCache;
}
