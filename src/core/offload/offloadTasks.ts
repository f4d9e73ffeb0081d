import {
  type MixedSequenceSpec,
  mixedSequence,
  mixedSequenceWork,
} from '../mixing/mixedSequence.js';
import { type EpochLayer, type LayerRules, epochRemainder } from '../sampling/epochRemainder.js';
import { permutation } from '../sampling/permutation.js';
import type { SplitIds } from '../splits/SplitIds.js';
import { asBuffer, splitIdsFrom } from '../splits/splitIdsFrom.js';

/**
 * One kind of work whose cost grows with a split's size: a pure function of plain data, so it
 * gives the same result inline and on a worker thread (see `Offloader`).
 */
export interface OffloadTask<I, O> {
  /** The input's cost in about one position or id each: small inputs run inline. */
  work(input: I): number;
  run(input: I): O;
  /** Buffers of the input handed to the thread instead of copied (unusable here after). */
  moveIn?(input: I): ArrayBuffer[];
  /** Buffers of the output handed back instead of copied. */
  moveOut(output: O): ArrayBuffer[];
  /** Restores what crossing threads loses (a Buffer arrives as a plain Uint8Array). */
  revive?(output: O): O;
}

/** Infers a task's input and output types. @internal */
const task = <I, O>(t: OffloadTask<I, O>): OffloadTask<I, O> => t;

/**
 * Buffers that may be handed over whole: at least half Node's pool size, so never a slice of
 * the shared pool `Buffer.allocUnsafe` takes small buffers from (handing that over would pull
 * it from under every other small buffer of the thread). Each buffer once.
 */
function movable(views: readonly Uint8Array[]): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const v of views) {
    if (v.byteLength >= Buffer.poolSize >>> 1 && v.buffer instanceof ArrayBuffer) {
      buffers.add(v.buffer);
    }
  }
  return [...buffers];
}

/**
 * The work that may leave the event loop, by name (one dispatcher: {@link runOffloadTask}).
 * A permutation and a mixed sequence are an epoch's order; a remainder is a re-sharded epoch's
 * positions left; split ids are joined, sorted (split `all`) and hashed.
 */
export const OFFLOAD_TASKS = {
  permutation: task({
    work: (i: { n: number; seed: bigint; epoch: number }) => i.n,
    run: (i) => permutation(i.n, i.seed, i.epoch),
    moveOut: (o) => [o.buffer as ArrayBuffer],
  }),
  mixedSequence: task({
    work: (i: { spec: MixedSequenceSpec; seed: bigint; epoch: number }) =>
      mixedSequenceWork(i.spec),
    run: (i) => mixedSequence(i.spec, i.seed, i.epoch),
    moveOut: (o) => [o.buffer as ArrayBuffer],
  }),
  epochRemainder: task({
    work: (i: { n: number; layers: readonly EpochLayer[]; rules: LayerRules }) =>
      i.n * Math.max(1, i.layers.length),
    run: (i) => epochRemainder(i.n, i.layers, i.rules),
    moveOut: (o) => [o.buffer as ArrayBuffer],
  }),
  splitIds: task({
    work: (i: { pieces: readonly Uint8Array[]; sort: boolean }) =>
      i.pieces.reduce((a, p) => a + p.byteLength, 0) / 16,
    run: (i): SplitIds => splitIdsFrom(i.pieces, i.sort),
    moveIn: (i) => movable(i.pieces),
    moveOut: (o) => movable([o.ids]),
    revive: (o) => ({ ...o, ids: asBuffer(o.ids) }),
  }),
};

/** The name of an {@link OFFLOAD_TASKS} entry. */
export type OffloadTaskName = keyof typeof OFFLOAD_TASKS;
/** What task `K` is computed from. */
export type OffloadInput<K extends OffloadTaskName> = Parameters<
  (typeof OFFLOAD_TASKS)[K]['run']
>[0];
/** What task `K` computes. */
export type OffloadOutput<K extends OffloadTaskName> = ReturnType<(typeof OFFLOAD_TASKS)[K]['run']>;

/** Looks task `name` up as an untyped task (the dispatcher's view). @internal */
export function offloadTask(name: OffloadTaskName): OffloadTask<unknown, unknown> {
  if (!Object.hasOwn(OFFLOAD_TASKS, name)) throw new RangeError(`no offload task ${name}`);
  return OFFLOAD_TASKS[name] as OffloadTask<unknown, unknown>;
}

/** Runs task `name` on this thread. */
export function runOffloadTask<K extends OffloadTaskName>(
  name: K,
  input: OffloadInput<K>,
): OffloadOutput<K> {
  return offloadTask(name).run(input) as OffloadOutput<K>;
}
