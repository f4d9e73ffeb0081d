/** The CQL types a metadata column may have. */
export const COLUMN_TYPES = ['text', 'int', 'bigint', 'double', 'boolean'] as const;

/** One of {@link COLUMN_TYPES}. */
export type ColumnType = (typeof COLUMN_TYPES)[number];

/** A user-declared metadata column. */
export interface ColumnSpec {
  name: string;
  type: ColumnType;
}

/** Narrows a string to a {@link ColumnType}. */
export function isColumnType(value: string): value is ColumnType {
  return (COLUMN_TYPES as readonly string[]).includes(value);
}
