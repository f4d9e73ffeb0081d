import type { FileMetaData } from 'hyparquet';
import { invalidArgument } from '../errors/LoaderError.js';

/**
 * Checks every byte range a Parquet footer claims (each column chunk's pages, and its offset
 * index, column index and Bloom filter when it has them) against the file's size, so that a
 * damaged or hostile footer is an INVALID_ARGUMENT error naming the file, the row group and
 * the column, before anything is allocated for the range. hyparquet takes the footer's
 * offsets and lengths as they are and asks for a buffer of that length: a footer claiming an
 * exabyte-long chunk would otherwise be an allocation of whatever it claims. Column chunks
 * must end before the footer starts (`size - 8 - metadata_length`), where every writer puts
 * them.
 *
 * @internal
 */
export function checkParquetExtents(file: string, size: number, metadata: FileMetaData): void {
  const footerStart = BigInt(size - 8 - metadata.metadata_length);
  for (const [g, group] of metadata.row_groups.entries()) {
    for (const [c, chunk] of group.columns.entries()) {
      const meta = chunk.meta_data;
      const column = meta?.path_in_schema?.join('.') || `#${c}`;
      const where = `Parquet file ${file}: column ${column} of row group ${g}`;
      const check = (what: string, offset: unknown, length: unknown): void => {
        const start = toBigInt(offset);
        const bytes = toBigInt(length);
        if (start === undefined || bytes === undefined || start < 0n || bytes < 0n) {
          throw invalidArgument(
            `${where} has an invalid ${what} (offset ${String(offset)}, length ` +
              `${String(length)}); the file's footer is damaged`,
          );
        }
        if (start + bytes > footerStart) {
          throw invalidArgument(
            `${where} claims its ${what} at bytes ${start} to ${start + bytes}, beyond the ` +
              `${footerStart} bytes before the file's footer (file size ${size}); the file is ` +
              'truncated or its footer is damaged',
          );
        }
      };
      if (!meta) {
        throw invalidArgument(`${where} has no column metadata; the file's footer is damaged`);
      }
      // Where hyparquet starts reading: a dictionary page comes first when there is one (an
      // offset of 0 is what some writers put for none).
      const start = meta.dictionary_page_offset || meta.data_page_offset;
      check('pages', start, meta.total_compressed_size);
      if (meta.dictionary_page_offset) check('dictionary page', meta.dictionary_page_offset, 0n);
      check('data pages', meta.data_page_offset, 0n);
      if (meta.bloom_filter_offset !== undefined) {
        check('Bloom filter', meta.bloom_filter_offset, meta.bloom_filter_length ?? 0);
      }
      if (chunk.offset_index_offset !== undefined) {
        check('offset index', chunk.offset_index_offset, chunk.offset_index_length ?? 0);
      }
      if (chunk.column_index_offset !== undefined) {
        check('column index', chunk.column_index_offset, chunk.column_index_length ?? 0);
      }
    }
  }
}

function toBigInt(value: unknown): bigint | undefined {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  return undefined;
}
