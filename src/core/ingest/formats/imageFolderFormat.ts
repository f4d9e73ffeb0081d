import { readImageFolder } from '../readImageFolder.js';
import type { IngestFormat } from './IngestFormat.js';

/**
 * An ImageFolder tree, `root/<class>/<file>`: classes are the sorted folder names; a root of
 * files without folders is unlabelled.
 */
export const imageFolderFormat: IngestFormat = {
  name: 'imagefolder',
  title: 'an ImageFolder tree',
  input: {
    name: 'imageFolder',
    value: '<root>',
    description: 'ImageFolder tree: <root>/<class>/<file>, or <root>/<file> without labels',
  },
  options: [],
  declaresTypes: false,
  sharding: 'entries',
  open: (input, { ignoreLabels, nameOption }) =>
    readImageFolder(
      String(input),
      ignoreLabels ? { ignoreLabels: nameOption('ignoreLabels') } : {},
    ),
};
