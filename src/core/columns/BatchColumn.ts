import type { ColumnType } from '../schema/columnTypes.js';

/** A value of a metadata column: `bigint` columns come as bigint, null where the row has none. */
export type ColumnValue = string | number | bigint | boolean | null;

/** One metadata column of a batch: one value per sample, in the batch's sample order. */
export interface BatchColumn {
  name: string;
  type: ColumnType;
  values: ColumnValue[];
}
