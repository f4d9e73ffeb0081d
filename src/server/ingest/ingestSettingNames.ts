import type { ConsistencySetting, DbConfig, IngestCapRules, IngestCaps } from '../../core/index.js';

/** The variables of the ingest caps, as IngestSamples refusals name them (`serve` settings). */
const CAP_VARIABLES: Record<keyof IngestCaps, string> = {
  maxMetadataColumns: 'SCYLLA_LOADER_MAX_METADATA_COLUMNS',
  maxLabelNames: 'SCYLLA_LOADER_MAX_LABEL_NAMES',
  maxLabelNameChars: 'SCYLLA_LOADER_MAX_LABEL_NAME_CHARS',
  maxSources: 'SCYLLA_LOADER_MAX_SOURCES',
};

/** The variables of the consistency settings, as messages of the loader name them. */
export const CONSISTENCY_VARIABLES: Record<ConsistencySetting, string> = {
  writeConsistency: 'SCYLLA_LOADER_WRITE_CONSISTENCY',
  readConsistency: 'SCYLLA_LOADER_READ_CONSISTENCY',
  sampleReadConsistency: 'SCYLLA_LOADER_SAMPLE_READ_CONSISTENCY',
};

/** The server's ingest caps, refusals naming each cap's variable. */
export function ingestCapRules(config: IngestCaps): IngestCapRules {
  return {
    maxMetadataColumns: config.maxMetadataColumns,
    maxLabelNames: config.maxLabelNames,
    maxLabelNameChars: config.maxLabelNameChars,
    maxSources: config.maxSources,
    settingNames: CAP_VARIABLES,
  };
}

/** The consistency levels of the server's database settings, by setting. */
export function consistencyLevels(db: DbConfig): Record<ConsistencySetting, string> {
  return {
    writeConsistency: db.writeConsistency,
    readConsistency: db.readConsistency,
    sampleReadConsistency: db.sampleReadConsistency,
  };
}
