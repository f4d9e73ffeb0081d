import { readManifest } from '../readManifest.js';
import type { IngestFormat } from './IngestFormat.js';

/** A CSV or JSONL manifest: `path`, `label`, `label_blob_path` and metadata columns. */
export const manifestFormat: IngestFormat = {
  name: 'manifest',
  title: 'a CSV/JSONL manifest',
  input: {
    name: 'manifest',
    value: '<file>',
    description: 'CSV or JSONL manifest with path, label and metadata columns',
  },
  options: [
    {
      name: 'root',
      value: '<dir>',
      description: "folder the manifest's paths are relative to (default: its folder)",
    },
  ],
  declaresTypes: true,
  sharding: 'entries',
  open: (input, { values, declaredTypes, ignoreLabels, nameOption }) =>
    readManifest(String(input), {
      ...(values['root'] ? { root: values['root'] } : {}),
      ...(ignoreLabels ? { ignoreLabels: nameOption('ignoreLabels') } : {}),
      declaredTypes,
    }),
};
