import { readParquet } from '../readParquet.js';
import type { IngestFormat } from './IngestFormat.js';

/**
 * Parquet files (Hugging Face dataset exports among others), read a row group at a time;
 * sharded by row group.
 */
export const parquetFormat: IngestFormat = {
  name: 'parquet',
  title: 'Parquet files',
  input: {
    name: 'parquet',
    value: '<file...>',
    description: 'Parquet files (e.g. a Hugging Face dataset export)',
  },
  options: [
    {
      name: 'imageColumn',
      value: '<name>',
      description: 'Parquet: image column (binary, or a {bytes, path} struct)',
    },
    {
      name: 'labelColumn',
      value: '<name>',
      description: 'Parquet: label column (default: the first of label, labels, class, target)',
    },
    {
      name: 'keyColumn',
      value: '<name>',
      description: 'Parquet: unique key column (default: file name and row)',
    },
    {
      name: 'labelBlobColumn',
      value: '<name>',
      description: 'Parquet: binary column stored as the label blob',
    },
  ],
  declaresTypes: true,
  sharding: 'own',
  open: (input, { values, declaredTypes, shard, nameOption, ignoreLabels }) =>
    readParquet([input].flat(), {
      ...(ignoreLabels ? { ignoreLabels: true } : {}),
      ...(shard ? { shard } : {}),
      ...(values['imageColumn'] ? { imageColumn: values['imageColumn'] } : {}),
      ...(values['labelColumn'] ? { labelColumn: values['labelColumn'] } : {}),
      ...(values['keyColumn'] ? { keyColumn: values['keyColumn'] } : {}),
      ...(values['labelBlobColumn'] ? { labelBlobColumn: values['labelBlobColumn'] } : {}),
      declaredTypes,
      nameOption,
    }),
};
