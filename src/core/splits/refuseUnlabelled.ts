import { invalidArgument } from '../errors/LoaderError.js';
import type { SplitInput } from './SplitInput.js';
import type { ClassTargets } from './SplitSpec.js';

/**
 * Refuses class targets that need labels the samples do not have (samples without a label are
 * -1 in {@link SplitInput.labels}): a balanced split of samples some of which have no label,
 * and class ratios over samples none of which has one, or that name -1. Natural proportions
 * need no label: unlabelled samples are split like any others. Ratios leave the unlabelled
 * samples of a partly labelled dataset out, as they leave out every label they do not name.
 */
export function refuseUnlabelled(dataset: string, input: SplitInput, targets: ClassTargets): void {
  if (targets.mode === 'natural') return;
  if (targets.mode === 'ratios' && targets.ratios[-1] !== undefined) {
    throw invalidArgument(
      'class ratios name label -1, which is not a class: it counts the samples without a label',
    );
  }
  let unlabelled = 0;
  for (const label of input.labels) if (label === -1) unlabelled++;
  // Ratios give no sample to a label they do not name: unlabelled samples among labelled
  // ones are simply left out.
  if (unlabelled === 0 || (targets.mode === 'ratios' && unlabelled < input.count)) return;
  const what =
    targets.mode === 'balanced'
      ? 'a balanced split (as many samples of every class as the rarest class has)'
      : 'a split by class ratios';
  if (unlabelled === input.count) {
    throw invalidArgument(
      `dataset ${dataset} is unlabelled: none of its ${input.count} samples` +
        ' (after the filters) has a label, so ' +
        `${what} cannot be made; split it without class targets (natural proportions, the ` +
        'default), or ingest the samples with labels into a dataset of their own',
    );
  }
  throw invalidArgument(
    `dataset ${dataset}: ${unlabelled} of its ${input.count} samples (after the filters) have ` +
      `no label, and ${what} needs a label on every sample; leave them out with a range filter ` +
      'on column label from 0 (label=0..), or split without class targets (natural proportions, the default)',
  );
}
