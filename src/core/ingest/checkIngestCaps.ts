import type { IngestCapRules, IngestCaps } from '../config/ingestCaps.js';
import { invalidArgument, type LoaderError } from '../errors/LoaderError.js';
import type { ColumnSpec } from '../schema/columnTypes.js';

/** What an ingest would add to a dataset, as far as it is known before the database is asked. */
export interface IngestAdditions {
  dataset: string;
  /** The ingest's metadata columns (user columns only). */
  columns: readonly ColumnSpec[];
  labelNames: readonly string[];
}

/**
 * Refuses, before anything is written or altered, an ingest whose own columns or class names
 * are over the caps: more metadata columns than a dataset may have, more class names, or a
 * class name too long. What depends on the dataset's stored state (columns it has, sources it
 * records) is checked by `ensureDatasetSchema` and `recordIngestStart`. Each refusal is
 * INVALID_ARGUMENT naming the cap and its setting.
 */
export function checkIngestCaps(additions: IngestAdditions, rules: IngestCapRules): void {
  const { dataset, columns, labelNames } = additions;
  if (columns.length > rules.maxMetadataColumns) {
    throw overIngestCap(
      rules,
      'maxMetadataColumns',
      `this ingest declares ${columns.length} metadata columns for dataset ${dataset}, over ` +
        `the cap of ${rules.maxMetadataColumns} metadata columns per dataset`,
    );
  }
  if (labelNames.length > rules.maxLabelNames) {
    throw overIngestCap(
      rules,
      'maxLabelNames',
      `this ingest gives dataset ${dataset} ${labelNames.length} class names, over the cap of ` +
        `${rules.maxLabelNames} class names per dataset`,
    );
  }
  labelNames.forEach((name, i) => {
    const chars = charsOver(name, rules.maxLabelNameChars);
    if (chars !== undefined) {
      throw overIngestCap(
        rules,
        'maxLabelNameChars',
        `class name ${i} (${JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}...` : name)}) is ` +
          `${chars} characters, over the cap of ${rules.maxLabelNameChars} characters a class name`,
      );
    }
  });
}

/**
 * An INVALID_ARGUMENT refusal of an ingest over one of its caps: `what` went over, which cap
 * and the setting that raises it, then `remedy`.
 */
export function overIngestCap(
  rules: IngestCapRules,
  cap: keyof IngestCaps,
  what: string,
  remedy = 'ingest within it, or raise the cap if the dataset really needs more',
): LoaderError {
  const setting = rules.settingNames?.[cap];
  return invalidArgument(
    `${what} (the ${cap} cap${setting === undefined ? '' : `, set by ${setting}`}); ${remedy}`,
  );
}

/** The characters (code points) of `text` when more than `max`, else undefined. */
function charsOver(text: string, max: number): number | undefined {
  // UTF-16 units are never fewer than code points: most names stop here.
  if (text.length <= max) return undefined;
  const chars = Array.from(text).length;
  return chars > max ? chars : undefined;
}
