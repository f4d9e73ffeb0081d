import type { ColumnSpec } from '../schema/columnTypes.js';
import type { IngestEntry } from './IngestEntry.js';

/** A source read and checked before any sample is written. */
export interface IngestSource {
  /** A short description stored with the dataset (e.g. `imagefolder:/data/pets`). */
  description: string;
  entries: IngestEntry[];
  /** Class names by label index; empty when labels are plain integers. */
  labelNames: string[];
  /** User metadata columns with their types. */
  columns: ColumnSpec[];
}
