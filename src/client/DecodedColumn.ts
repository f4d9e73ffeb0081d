/** The CQL type of a metadata column, as a batch says it. */
export type DecodedColumnType = 'text' | 'int' | 'bigint' | 'double' | 'boolean';

/**
 * One metadata column of a batch (`StreamBatchesOptions.columns`), one value per sample in the
 * batch's order. Numbers come as typed arrays (a null's slot holds 0, its bit set in `nulls`);
 * text and booleans as arrays with `null` entries. `valueAt(i)` gives any column's value or
 * null alike.
 */
export type DecodedColumn = (
  | { type: 'text'; values: (string | null)[] }
  | { type: 'int'; values: Int32Array }
  | { type: 'bigint'; values: BigInt64Array }
  | { type: 'double'; values: Float64Array }
  | { type: 'boolean'; values: (boolean | null)[] }
) & {
  name: string;
  /** Bit `i % 8` of byte `i / 8` is set when sample `i`'s value is null; undefined: none is. */
  nulls: Uint8Array | undefined;
  /** Sample `i`'s value, or null. */
  valueAt(i: number): string | number | bigint | boolean | null;
};
