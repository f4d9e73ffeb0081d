import { v5 as uuidv5 } from 'uuid';

/**
 * The project's fixed namespace for sample ids. Never change it: every stored id derives from
 * it, and re-ingesting relies on getting the same ids again.
 */
export const SAMPLE_ID_NAMESPACE = '3f6c1d2e-8b4a-5c7e-9d10-2a4b6c8e0f13';

/** Namespace of one dataset's ids: `uuidv5(datasetName, NS)`. */
export function datasetNamespace(dataset: string): string {
  return uuidv5(dataset, SAMPLE_ID_NAMESPACE);
}

/**
 * A sample's id: `uuidv5(sourceKey, uuidv5(datasetName, NS))`, where `sourceKey` is the
 * root-relative POSIX path (ImageFolder) or the manifest's `path`. Pass the namespace from
 * {@link datasetNamespace} when computing many ids.
 */
export function sampleId(sourceKey: string, namespace: string): string {
  return uuidv5(sourceKey, namespace);
}
