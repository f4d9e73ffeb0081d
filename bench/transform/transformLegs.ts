import type { Transform } from '../../src/proto/index.js';

/** The legs of `bench transform`, in the order the table lists them. */
export const TRANSFORM_LEG_NAMES = [
  'server-raw',
  'server-raw-sharp',
  'python-pil',
  'python-v2',
  'server-jpeg',
  'server-raw-proxy-0ms',
  'server-raw-proxy-rtt',
  'server-raw-masks',
  'dataset-bytes',
  'dataset-raw',
  'dataset-bytes-main',
  'dataset-raw-main',
] as const;

/** One leg's name. */
export type TransformLegName = (typeof TRANSFORM_LEG_NAMES)[number];

/** How a leg gets its images, as the Python child (`transform_legs.py`) runs it. */
export interface TransformLegSpec {
  name: TransformLegName;
  /**
   * `server`: the loader transforms, read by `LoaderClient`; `pil` / `v2`: DataLoader workers
   * do, on stored bytes; `dataset`: `LoaderDataset` in DataLoader workers with no Python
   * transform (the trainer side's own cost), over stored bytes or the server's raw output.
   */
  kind: 'server' | 'pil' | 'v2' | 'dataset';
  /** Output of a server leg; of a dataset leg, `bytes` (as stored) or `raw` (transformed). */
  output?: 'raw' | 'jpeg' | 'bytes';
  /** `sharp`: a loader with native transforms off (the fallback path), for the side-by-side. */
  decoder?: 'sharp';
  /** `proxy`: a loader whose database connections go through toxiproxy. */
  route: 'direct' | 'proxy';
  /** Round trip injected on the proxy during this leg, in ms (the run's `rttMs` for `-rtt`). */
  rttMs?: number;
  /**
   * The segmentation dataset (the same photos, each with a PNG mask as its label blob),
   * streamed with `Transform.masks`: each pair's mask follows its image's crop and flip.
   */
  masks?: true;
  /**
   * DataLoader workers of a dataset leg (absent: the bench's `workers`); 0 iterates in the
   * trainer's own process, so no batch crosses from a worker to it.
   */
  workers?: 0;
}

/**
 * The legs for an injected round trip of `rttMs`: (a) the server's RandomResizedCrop + flip
 * with RAW output (the native module decodes), the same on a loader with native transforms off
 * (sharp decodes), (b) and (c) the same transform in Python on the stored bytes (PIL, then
 * torchvision.transforms.v2), (d) the server's transform re-encoded as JPEG (bytes on the
 * wire), and leg (a) on a loader behind toxiproxy at 0 ms and at `rttMs`, so the ratio of the
 * two is the latency's cost alone (the proxy's own is in both), leg (a) on the same photos
 * each with a PNG mask that follows its crop and flip (`Transform.masks`), and the trainer
 * side of `LoaderDataset` alone (issue 41's goal 3): DataLoader workers yielding the stored
 * bytes, and yielding leg (a)'s raw tensors, with nothing done to them in Python, and the same
 * two iterated in the trainer's own process (`num_workers=0`). @internal
 */
export function transformLegs(rttMs: number): TransformLegSpec[] {
  return [
    { name: 'server-raw', kind: 'server', output: 'raw', route: 'direct' },
    { name: 'server-raw-sharp', kind: 'server', output: 'raw', route: 'direct', decoder: 'sharp' },
    { name: 'python-pil', kind: 'pil', route: 'direct' },
    { name: 'python-v2', kind: 'v2', route: 'direct' },
    { name: 'server-jpeg', kind: 'server', output: 'jpeg', route: 'direct' },
    { name: 'server-raw-proxy-0ms', kind: 'server', output: 'raw', route: 'proxy', rttMs: 0 },
    { name: 'server-raw-proxy-rtt', kind: 'server', output: 'raw', route: 'proxy', rttMs },
    { name: 'server-raw-masks', kind: 'server', output: 'raw', route: 'direct', masks: true },
    { name: 'dataset-bytes', kind: 'dataset', output: 'bytes', route: 'direct' },
    { name: 'dataset-raw', kind: 'dataset', output: 'raw', route: 'direct' },
    { name: 'dataset-bytes-main', kind: 'dataset', output: 'bytes', route: 'direct', workers: 0 },
    { name: 'dataset-raw-main', kind: 'dataset', output: 'raw', route: 'direct', workers: 0 },
  ];
}

/** A leg's row label in the table. @internal */
export function legLabel(leg: TransformLegSpec): string {
  switch (leg.kind) {
    case 'pil':
      return 'Python: PIL decode, RRC + flip in DataLoader workers';
    case 'v2':
      return 'Python: decode_jpeg, v2 RRC + flip in DataLoader workers';
    case 'dataset':
      return (
        `LoaderDataset ${leg.workers === 0 ? 'in the main process (num_workers=0)' : 'in DataLoader workers'}: ` +
        (leg.output === 'raw' ? 'server RRC + flip, raw tensors' : 'bytes as stored')
      );
    case 'server':
      return (
        `server: RRC + flip, ${leg.output === 'jpeg' ? 'JPEG' : 'raw'}` +
        (leg.output === 'jpeg' ? '' : leg.decoder === 'sharp' ? ' (sharp)' : ' (native)') +
        (leg.route === 'proxy' ? `, via toxiproxy ${leg.rttMs ?? 0} ms` : '') +
        (leg.masks ? ', image + PNG mask pairs' : '')
      );
  }
}

/**
 * Run `run`'s order of the legs: rotated by one leg per run, so on a shared, noisy machine no
 * leg always runs first or right after the same neighbour. @internal
 */
export function legOrder<T>(legs: readonly T[], run: number): T[] {
  const k = legs.length === 0 ? 0 : run % legs.length;
  return [...legs.slice(k), ...legs.slice(0, k)];
}

/** Every leg of every run, each run in its own `legOrder`. @internal */
export function legRuns<T>(legs: readonly T[], runs: number): { leg: T; run: number }[] {
  return Array.from({ length: runs }, (_, run) =>
    legOrder(legs, run).map((leg) => ({ leg, run })),
  ).flat();
}

/**
 * The server-side transform of the benchmark, as the request's `transform` field (proto JSON,
 * camelCase, the shape proto-loader types it in): decode to RGB, RandomResizedCrop to
 * size x size (torchvision's default scale and ratio ranges), horizontal flip with probability
 * `flip`, bilinear (torchvision's default), RAW uint8 or JPEG of `quality`, and failing on a
 * bad image (the dataset has none). @internal
 */
export function serverTransform(options: {
  size: number;
  flip: number;
  output: 'raw' | 'jpeg';
  quality: number;
  masks?: boolean;
}): Transform {
  return {
    channels: 3,
    randomResizedCrop: {
      height: options.size,
      width: options.size,
      scaleMin: 0.08,
      scaleMax: 1,
      ratioMin: 3 / 4,
      ratioMax: 4 / 3,
    },
    horizontalFlip: options.flip,
    interpolation: 'INTERPOLATION_BILINEAR',
    output: options.output === 'raw' ? 'TRANSFORM_OUTPUT_RAW' : 'TRANSFORM_OUTPUT_JPEG',
    ...(options.output === 'raw' ? {} : { quality: options.quality }),
    badImagePolicy: 'BAD_IMAGE_POLICY_FAIL',
    ...(options.masks ? { masks: true } : {}),
  };
}
