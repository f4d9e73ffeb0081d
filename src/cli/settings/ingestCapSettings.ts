import type { Command } from 'commander';
import { type IngestCapRules, type IngestCaps, ingestCapsSchema } from '../../core/index.js';
import { type Setting, settingName } from './Setting.js';
import { schemaFacts } from './schemaFacts.js';
import {
  type FlagValues,
  addSettingOptions,
  parseSettings,
  rawFromFlags,
} from './settingOptions.js';

/**
 * The caps on what an ingest may add to a dataset, settings of both `serve` (IngestSamples
 * calls) and `ingest`: the same flags and variables, defaults from `ingestCapsSchema`.
 */
export const INGEST_CAP_SETTINGS: readonly Setting[] = [
  {
    field: 'maxMetadataColumns',
    flag: '--max-metadata-columns <n>',
    env: 'SCYLLA_LOADER_MAX_METADATA_COLUMNS',
    type: 'number',
    unit: 'columns',
    help:
      'user metadata columns a dataset may have; an ingest that would add more (each new one ' +
      'is a schema change of the whole cluster) is refused before any',
  },
  {
    field: 'maxLabelNames',
    flag: '--max-label-names <n>',
    env: 'SCYLLA_LOADER_MAX_LABEL_NAMES',
    type: 'number',
    unit: 'names',
    help: 'class names a dataset may have (stored in one row, read by every describe)',
  },
  {
    field: 'maxLabelNameChars',
    flag: '--max-label-name-chars <n>',
    env: 'SCYLLA_LOADER_MAX_LABEL_NAME_CHARS',
    type: 'number',
    unit: 'characters',
    help: 'characters of one class name',
  },
  {
    field: 'maxSources',
    flag: '--max-sources <n>',
    env: 'SCYLLA_LOADER_MAX_SOURCES',
    type: 'number',
    unit: 'sources',
    help: "distinct sources a dataset's info row records; an ingest under a new one past it is refused",
  },
];

const CAP_FACTS = schemaFacts(ingestCapsSchema);

/** Adds the ingest cap flags, with their variables, to a command. */
export function addIngestCapOptions(cmd: Command): Command {
  return addSettingOptions(cmd, INGEST_CAP_SETTINGS, CAP_FACTS);
}

/**
 * The ingest caps from flags (Commander has filled them from their variables), with the names
 * refusals give their settings; a value out of range is INVALID_ARGUMENT naming its flag.
 */
export function ingestCapsFromFlags(flags: FlagValues): IngestCapRules {
  const caps = parseSettings('ingest caps', INGEST_CAP_SETTINGS, () =>
    ingestCapsSchema.parse(rawFromFlags(INGEST_CAP_SETTINGS, flags)),
  );
  const settingNames: Partial<Record<keyof IngestCaps, string>> = {};
  for (const s of INGEST_CAP_SETTINGS) settingNames[s.field as keyof IngestCaps] = settingName(s);
  return { ...caps, settingNames };
}
