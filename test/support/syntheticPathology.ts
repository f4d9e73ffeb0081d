import { v4 } from 'uuid';
import type { SplitInput } from '../../src/core/index.js';

/** One synthetic tile: a patient, a slide, coordinates, and normal (0) or tumor (1). */
export interface Tile {
  patient: number;
  slide: number;
  x: number;
  y: number;
  label: number;
}

/**
 * A pathology-like metadata set: `patients` patients with 1-4 slides of 10-150 tiles each;
 * about a third of the patients have tumor, on 10-60% of their tiles, so labels are
 * imbalanced (roughly 85% normal) and correlated within a patient. Deterministic for a seed.
 */
export function syntheticPathology(patients: number, seed = 1): Tile[] {
  let state = seed >>> 0 || 1;
  const rand = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  const tiles: Tile[] = [];
  for (let p = 0; p < patients; p++) {
    const tumorShare = rand() < 0.35 ? 0.1 + rand() * 0.5 : 0;
    const slides = 1 + Math.floor(rand() * 4);
    for (let s = 0; s < slides; s++) {
      const n = 10 + Math.floor(rand() * 140);
      for (let t = 0; t < n; t++) {
        tiles.push({
          patient: p,
          slide: p * 10 + s,
          x: Math.floor(rand() * 50_000),
          y: Math.floor(rand() * 50_000),
          label: rand() < tumorShare ? 1 : 0,
        });
      }
    }
  }
  return tiles;
}

/** The tiles as a {@link SplitInput} grouped by patient, with random ids. */
export function toSplitInput(tiles: Tile[]): SplitInput {
  const ids = Buffer.alloc(tiles.length * 16);
  tiles.forEach((_, i) => v4(undefined, ids, i * 16));
  const groupIndex = new Map<number, number>();
  const groups = Int32Array.from(tiles, (t) => {
    let g = groupIndex.get(t.patient);
    if (g === undefined) groupIndex.set(t.patient, (g = groupIndex.size));
    return g;
  });
  return {
    count: tiles.length,
    ids,
    labels: Int32Array.from(tiles, (t) => t.label),
    groups,
    groupCount: groupIndex.size,
  };
}
