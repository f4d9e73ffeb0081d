import { invalidArgument } from '../errors/LoaderError.js';
import { type NameOption, ownOptionName } from '../ingest/nameOption.js';
import { RandomStream } from '../sampling/randomStream.js';
import { apportion } from './apportion.js';
import { classTargets } from './classTargets.js';
import type { SplitInput } from './SplitInput.js';
import type { SplitSpec } from './SplitSpec.js';

/** One part of a computed split set. */
export interface SplitPart {
  name: string;
  /** Indices into the input's samples, in the part's stored order. */
  samples: Uint32Array;
  /** Achieved samples per label. */
  classCounts: Map<number, number>;
  /** Wanted samples per label. */
  targets: Map<number, number>;
  /** Groups that gave the part at least one sample. */
  groups: number;
}

/** A computed split set, with how far it is from its targets. */
export interface SplitResult {
  parts: SplitPart[];
  /**
   * Parts and labels off their target by more than 1% (or 1 sample): short of it, or, when
   * every sample is kept, on either side.
   */
  shortfalls: Array<{ part: string; label: number; target: number; achieved: number }>;
  /** Largest |achieved - target| / target over parts' sizes and per-label counts. */
  worstDeviation: number;
}

/**
 * Assigns whole groups to parts, then samples to reach per-part, per-label targets:
 *
 * 1. per-label totals come from {@link classTargets}; each part gets its weight's share of
 *    every label;
 * 2. groups, in a seeded random order and then largest first, each go to the part whose
 *    unmet per-label targets they fill most (between equals, where their labels are least
 *    supplied relative to the part's weight), so every part gets enough of every label to
 *    choose from and no group is split;
 * 3. within a part, samples are taken round robin across its groups (each group's samples in
 *    seeded order) until the part's per-label targets are met, which maximises diversity.
 *
 * With natural targets and no size cap, every sample of every group is kept (k-fold
 * cross-validation covers the whole set) and the parts' sizes follow the group sizes as
 * closely as the greedy placement allows. A target missed by more than 1% (or 1 sample) is an
 * INVALID_ARGUMENT error saying what was reached, unless `allowShortfall` is set; the error
 * names that option as `nameOption` does (the CLI: `--allow-shortfall`).
 */
export function assignSplits(
  input: SplitInput,
  spec: SplitSpec,
  nameOption: NameOption = ownOptionName,
): SplitResult {
  const partNames = spec.parts.map(([n]) => n);
  const weights = spec.parts.map(([, w]) => w);
  if (weights.some((w) => !(w > 0))) throw invalidArgument('every part needs a positive weight');
  const rng = new RandomStream('scylla-loader/splits/v1', spec.seed);

  // Samples of each group, by label, each list in seeded order.
  const byGroup: Array<Map<number, number[]>> = Array.from(
    { length: input.groupCount },
    () => new Map(),
  );
  const available = new Map<number, number>();
  for (let i = 0; i < input.count; i++) {
    const label = input.labels[i]!;
    const lists = byGroup[input.groups[i]!]!;
    let list = lists.get(label);
    if (!list) lists.set(label, (list = []));
    list.push(i);
    available.set(label, (available.get(label) ?? 0) + 1);
  }
  if (input.count === 0) throw invalidArgument('no samples to split (check the filter)');
  for (const lists of byGroup) for (const list of lists.values()) shuffle(list, rng);

  const totals = classTargets(available, spec.classTargets, spec.maxTotal);
  const takeAll = spec.classTargets.mode === 'natural' && spec.maxTotal === undefined;
  const labels = [...totals.keys()].sort((a, b) => a - b);
  const targets = partNames.map(() => new Map<number, number>());
  for (const label of labels) {
    apportion(totals.get(label)!, weights).forEach((t, p) => targets[p]!.set(label, t));
  }
  const weightSum = weights.reduce((a, b) => a + b, 0);
  // What each part should be offered of each label: its share of all that is available (or
  // exactly its target when everything is kept).
  const desired = (p: number, label: number): number =>
    takeAll ? targets[p]!.get(label)! : (available.get(label)! * weights[p]!) / weightSum;

  // Group placement.
  const order = Array.from({ length: input.groupCount }, (_, g) => g);
  shuffle(order, rng);
  const sizeOf = (g: number): number => {
    let n = 0;
    for (const [label, list] of byGroup[g]!) if (totals.get(label)) n += list.length;
    return n;
  };
  const sizes = order.map(sizeOf);
  const bySize = order.map((g, i) => [g, sizes[i]!] as const).sort((a, b) => b[1] - a[1]);
  const supply = partNames.map(() => new Map<number, number>());
  const partOf = new Int32Array(input.groupCount).fill(-1);
  const partTotals = partNames.map((_, p) => [...targets[p]!.values()].reduce((a, b) => a + b, 0));
  for (const [g, size] of bySize) {
    if (size === 0) continue;
    // First choice: the part whose unmet targets this group fills most; between equals, the
    // part where the group's labels are least supplied relative to what it should receive.
    let best = -1;
    let bestGain = -1;
    let bestCost = Infinity;
    for (let p = 0; p < partNames.length; p++) {
      let gain = 0;
      let cost = 0;
      for (const [label, list] of byGroup[g]!) {
        if (!totals.get(label)) continue;
        const have = supply[p]!.get(label) ?? 0;
        gain += Math.min(list.length, Math.max(0, targets[p]!.get(label)! - have));
        const want = desired(p, label);
        cost += want > 0 ? (list.length * (have + list.length)) / want : Infinity;
      }
      if (gain > bestGain || (gain === bestGain && cost < bestCost)) {
        best = p;
        bestGain = gain;
        bestCost = cost;
      }
    }
    if (takeAll && size > partTotals[best]! && !spec.allowShortfall) {
      throw invalidArgument(
        `a group of ${size} samples is larger than part ${partNames[best]} (${partTotals[best]} ` +
          'samples): no placement can keep its groups whole and meet the ratios; use fewer ' +
          `parts or larger weights for small parts, or ${nameOption('allowShortfall')} for the best ` +
          'possible',
      );
    }
    partOf[g] = best;
    for (const [label, list] of byGroup[g]!) {
      supply[best]!.set(label, (supply[best]!.get(label) ?? 0) + list.length);
    }
  }

  // Sample selection, round robin across each part's groups.
  const groupsOf: number[][] = partNames.map(() => []);
  for (const g of order) if (partOf[g]! >= 0) groupsOf[partOf[g]!]!.push(g);
  const parts: SplitPart[] = [];
  const shortfalls: SplitResult['shortfalls'] = [];
  let worst = 0;
  for (let p = 0; p < partNames.length; p++) {
    const chosen: number[] = [];
    const classCounts = new Map<number, number>();
    for (const label of labels) {
      const lists = groupsOf[p]!.map((g) => byGroup[g]!.get(label)).filter((l) => l !== undefined);
      const need = takeAll ? Infinity : targets[p]!.get(label)!;
      const taken = roundRobin(lists, need, chosen);
      classCounts.set(label, taken);
      const target = targets[p]!.get(label)!;
      // Group granularity may leave a part a few samples off when a label is used up (e.g.
      // the rarest label of a balanced split); within 1% (or 1 sample) that is a deviation,
      // beyond it the target is out of reach. Keeping every sample (natural targets) can
      // miss both ways.
      const miss = takeAll ? Math.abs(target - taken) : target - taken;
      if (miss > Math.max(1, 0.01 * target)) {
        shortfalls.push({ part: partNames[p]!, label, target, achieved: taken });
      }
      if (target > 0) worst = Math.max(worst, Math.abs(taken - target) / target);
    }
    if (partTotals[p]! > 0)
      worst = Math.max(worst, Math.abs(chosen.length - partTotals[p]!) / partTotals[p]!);
    parts.push({
      name: partNames[p]!,
      samples: Uint32Array.from(chosen),
      classCounts,
      targets: targets[p]!,
      groups: new Set(chosen.map((i) => input.groups[i]!)).size,
    });
  }
  if (shortfalls.length > 0 && !spec.allowShortfall) {
    const lines = shortfalls
      .slice(0, 10)
      .map((s) => `part ${s.part}, label ${s.label}: target ${s.target}, best found ${s.achieved}`);
    throw invalidArgument(
      `the targets cannot be met while keeping every group in one part: ${lines.join('; ')}` +
        `${shortfalls.length > 10 ? ` (and ${shortfalls.length - 10} more)` : ''}; ` +
        'lower the targets (e.g. a smaller maximum size), or pass ' +
        `${nameOption('allowShortfall')} to accept ` +
        'the best feasible split with these deviations',
    );
  }
  return { parts, shortfalls, worstDeviation: worst };
}

/** Takes up to `need` items, one per list per round, appending them to `out`. */
function roundRobin(lists: number[][], need: number, out: number[]): number {
  let taken = 0;
  let live = lists.filter((l) => l.length > 0);
  for (let round = 0; taken < need && live.length > 0; round++) {
    for (const list of live) {
      if (taken >= need) break;
      out.push(list[round]!);
      taken++;
    }
    live = live.filter((l) => l.length > round + 1);
  }
  return taken;
}

function shuffle(items: number[], rng: RandomStream): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.below(i + 1);
    const t = items[i]!;
    items[i] = items[j]!;
    items[j] = t;
  }
}
