import type { TransformLegName } from './transformLegs.js';

/** What the Python child of a leg reports (`clients/python/bench/transform_legs.py`). */
export interface TransformLegChildResult {
  images: number;
  /** From `go` to the last batch. */
  wallSeconds: number;
  /** CPU seconds of the Python process and its reaped DataLoader workers. */
  cpuSeconds: number;
  /** Response bytes received (data, ids, tokens); null where the workers received them. */
  wireBytes: number | null;
  skippedUndecodable: number;
  /** Shape of the last batch's tensor (N, C, H, W). */
  lastShape: number[];
}

/** One measured run of one leg. */
export interface TransformLegRun {
  leg: TransformLegName;
  run: number;
  images: number;
  wallSeconds: number;
  /** CPU seconds during the run; `loader` or `database` absent when unknown. */
  cpuSeconds: { loader?: number; python: number; database?: number };
  /** Response bytes per image: counted by the client, or the stored mean for Python legs. */
  wireBytesPerImage: number;
  /** False when {@link wireBytesPerImage} is the dataset's stored mean, not counted. */
  wireBytesCounted: boolean;
  lastShape: number[];
}

/** The goal ratios, from the medians (null when a leg is missing). */
export interface TransformGoals {
  /**
   * The sharp loader's CPU per image over the native one's, RAW legs (goal: at least 3 for the
   * transform alone; the loader's CPU also holds reads and gRPC, so this understates it).
   */
  nativeLoaderCpuVsSharp: number | null;
  /** Server RAW images per CPU second over the PIL leg's (goal: at least 2). */
  cpuEfficiencyVsPil: number | null;
  /** Same against the torchvision.transforms.v2 leg (goal: at least 2). */
  cpuEfficiencyVsV2: number | null;
  /** Proxied RAW images/s at the injected round trip over at 0 ms (goal: at least 0.9). */
  latencyRetention: number | null;
  /** RAW response bytes per image over the JPEG leg's. */
  rawOverJpegBytes: number | null;
  /**
   * The PIL leg's Python CPU per image over the server RAW leg's: the trainer's share of the
   * work alone (no goal; the loader usually runs on other machines than the trainer).
   */
  trainerCpuPilOverRaw: number | null;
  /** Same for the torchvision.transforms.v2 leg. */
  trainerCpuV2OverRaw: number | null;
  /**
   * The loader's CPU per image + mask pair (masks leg) over its CPU per image alone (server
   * raw leg, the same photos; goal: at most 1.3).
   */
  masksLoaderCpuVsImage: number | null;
  /**
   * The trainer side of `LoaderDataset` alone, Python CPU ms per sample (the process and its
   * DataLoader workers), over the stored bytes and over the server's raw tensors (issue 41's
   * goal 3: at most 0.3 each).
   */
  datasetPythonMsPerSample: {
    bytes: number | null;
    raw: number | null;
    /** The same two iterated in the trainer's own process (num_workers=0). */
    bytesMain: number | null;
    rawMain: number | null;
  };
}
