import { readWebDataset } from '../readWebDataset.js';
import type { IngestFormat } from './IngestFormat.js';

/**
 * WebDataset tar shards (`.tar`, `.tar.gz`), named literally or by brace patterns. Sharded by
 * whole files when there are at least as many as processes, else by member group.
 */
export const webDatasetFormat: IngestFormat = {
  name: 'webdataset',
  title: 'WebDataset tar shards',
  input: {
    name: 'webdataset',
    value: '<tar...>',
    description:
      'WebDataset tar shards (.tar, .tar.gz), or brace patterns like shard-{000..099}.tar',
  },
  options: [
    {
      name: 'labelField',
      value: '<name>',
      description: 'WebDataset: JSON field with the label (default: label)',
    },
  ],
  declaresTypes: true,
  sharding: 'own',
  open: (input, { values, declaredTypes, shard, nameOption, ignoreLabels }) =>
    readWebDataset([input].flat(), {
      ...(ignoreLabels ? { ignoreLabels: true } : {}),
      ...(shard ? { shard } : {}),
      ...(values['labelField'] ? { labelField: values['labelField'] } : {}),
      declaredTypes,
      nameOption,
    }),
};
