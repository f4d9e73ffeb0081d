import type { TransformPlan } from './geometry.js';

/** What a mask follows: its image's stored size, EXIF orientation and plan. @internal */
export interface MaskTarget {
  /** The image's size as stored (before its orientation). */
  storedWidth: number;
  storedHeight: number;
  /** The image's EXIF orientation, 1-8: the mask is aligned with the stored pixels. */
  orientation: number;
  plan: TransformPlan;
}

/**
 * Where each output row and column of a plan reads the oriented source image, by nearest
 * neighbour: the source pixel holding the centre of the output pixel, through the resize, the
 * region (and its resize) and the flip, as the image's resamplings place their centres. -1 is
 * padding (zero).
 * @internal
 */
export function nearestAxes(plan: TransformPlan): { cols: Int32Array; rows: Int32Array } {
  const base = plan.resize ?? plan.source;
  const region = plan.region ?? { left: 0, top: 0, width: base.width, height: base.height };
  const to = plan.output ?? { width: region.width, height: region.height };
  const pad = plan.pad ?? { top: 0, bottom: 0, left: 0, right: 0 };
  const axis = (
    size: number,
    before: number,
    toLen: number,
    start: number,
    len: number,
    baseLen: number,
    sourceLen: number,
    mirror: boolean,
  ): Int32Array => {
    const map = new Int32Array(size);
    for (let i = 0; i < size; i++) {
      const o = (mirror ? size - 1 - i : i) - before;
      if (o < 0 || o >= toLen) {
        map[i] = -1;
        continue;
      }
      const r = start + Math.min(len - 1, Math.floor(((o + 0.5) * len) / toLen));
      map[i] = Math.min(sourceLen - 1, Math.floor(((r + 0.5) * sourceLen) / baseLen));
    }
    return map;
  };
  const cols = axis(
    plan.width,
    pad.left,
    to.width,
    region.left,
    region.width,
    base.width,
    plan.source.width,
    plan.flip,
  );
  const rows = axis(
    plan.height,
    pad.top,
    to.height,
    region.top,
    region.height,
    base.height,
    plan.source.height,
    false,
  );
  return { cols, rows };
}

/**
 * Index of stored pixel under oriented `(x, y)`, as `start + x * stepX + y * stepY`, for EXIF
 * `orientation` of a stored `width x height` image.
 */
function orientedSteps(
  orientation: number,
  width: number,
  height: number,
): { start: number; stepX: number; stepY: number } {
  const w = width;
  const h = height;
  switch (orientation) {
    case 2:
      return { start: w - 1, stepX: -1, stepY: w };
    case 3:
      return { start: (h - 1) * w + w - 1, stepX: -1, stepY: -w };
    case 4:
      return { start: (h - 1) * w, stepX: 1, stepY: -w };
    case 5:
      return { start: 0, stepX: w, stepY: 1 };
    case 6:
      return { start: (h - 1) * w, stepX: -w, stepY: 1 };
    case 7:
      return { start: (h - 1) * w + w - 1, stepX: -w, stepY: -1 };
    case 8:
      return { start: w - 1, stepX: w, stepY: -1 };
    default:
      return { start: 0, stepX: 1, stepY: w };
  }
}

/**
 * Applies a sample's plan to its mask (one byte per pixel, `width x height` as stored, the
 * image's stored size) by nearest neighbour: the image's EXIF `orientation`, resize, crop
 * window, padding (0) and flip. Writes `plan.width * plan.height` bytes to `out` at `offset`.
 * @internal
 */
export function sampleMask(
  mask: Uint8Array,
  width: number,
  height: number,
  orientation: number,
  plan: TransformPlan,
  out: Uint8Array,
  offset: number,
): void {
  const { cols, rows } = nearestAxes(plan);
  const { start, stepX, stepY } = orientedSteps(orientation, width, height);
  // Each column's offset from its row's start (negative when the orientation mirrors), and
  // whether it is padding.
  const xs = new Int32Array(cols.length);
  const padded = new Uint8Array(cols.length);
  for (let x = 0; x < cols.length; x++) {
    if (cols[x]! < 0) padded[x] = 1;
    else xs[x] = cols[x]! * stepX;
  }
  let at = offset;
  for (let y = 0; y < rows.length; y++) {
    const row = rows[y]!;
    if (row < 0) {
      out.fill(0, at, at + xs.length);
      at += xs.length;
      continue;
    }
    const base = start + row * stepY;
    for (let x = 0; x < xs.length; x++) out[at++] = padded[x] ? 0 : mask[base + xs[x]!]!;
  }
}
