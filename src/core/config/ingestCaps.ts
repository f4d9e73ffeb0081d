import { z } from 'zod';

/**
 * How much schema and bookkeeping ingests may add to a dataset, validated with the rest of the
 * configuration. Whoever may ingest (a `writer` token, a pipeline) must not be able to grow the
 * cluster's schema or a dataset's info row without bound: every new metadata column is an
 * ALTER TABLE, a schema change every node of the cluster applies and keeps, and the label
 * names and sources live in one row that every describe and ingest reads whole.
 */
export const ingestCapsSchema = z.object({
  /**
   * User metadata columns a dataset may have (built-in ones not counted). 256: far more than
   * any tabular manifest we know needs (a slide's patient, site, stain, coordinates... is a
   * dozen), while the schema, which every node holds and every schema change re-sends,
   * stays small; a source with thousands of columns is refused before any ALTER TABLE.
   */
  maxMetadataColumns: z.number().int().min(1).max(10_000).default(256),
  /**
   * Class names a dataset may have. 100,000: ImageNet-21k's 21,841 classes and iNaturalist's
   * 10,000 several times over; the names are one list in the dataset's info row.
   */
  maxLabelNames: z.number().int().min(1).max(10_000_000).default(100_000),
  /**
   * Characters of one class name. 128: a WordNet synset's lemmas or an iNaturalist taxonomic
   * path (about 80) fit, and the list at both caps (12.8 MB of ASCII) stays within what one
   * database write takes (16 MiB by default in Cassandra and ScyllaDB); raising both caps far
   * makes a list the database refuses.
   */
  maxLabelNameChars: z.number().int().min(1).max(65_536).default(128),
  /**
   * Distinct sources a dataset's info row records (each ingest adds its source, e.g.
   * `parquet:/data/train.parquet` or an IngestSamples call's `source`, once). 1,000: a dataset
   * ingested from a thousand separate exports, while a client that names every call anew
   * cannot grow the row (up to 1 kB a source) without bound.
   */
  maxSources: z.number().int().min(1).max(1_000_000).default(1_000),
});

/** Validated ingest caps. */
export type IngestCaps = z.infer<typeof ingestCapsSchema>;

/** The caps' defaults. */
export const DEFAULT_INGEST_CAPS: IngestCaps = ingestCapsSchema.parse({});

/**
 * Ingest caps with how the caller's command names each cap's setting (`serve`'s variable, or
 * `ingest`'s flag and variable), which refusals add so a person knows what to raise. A cap
 * without a name is named by its field (`maxMetadataColumns`).
 */
export interface IngestCapRules extends IngestCaps {
  settingNames?: Partial<Record<keyof IngestCaps, string>>;
}
