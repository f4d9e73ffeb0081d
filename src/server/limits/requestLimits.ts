/**
 * What one request of each LoaderService method may be, in bytes on the wire and in fields
 * and messages once decoded. The byte limit is checked as the body arrives, before it is
 * buffered whole ({@link messageLimitInterceptor}); the field budget before the body is
 * decoded ({@link countDecodedFields}): protobufjs turns every 2-byte empty sub-message into an
 * object of ~200 bytes with its defaults, so bytes alone do not bound what a request costs.
 *
 * @internal
 */
export interface RequestLimit {
  /** Largest request body, bytes. */
  bytes: number;
  /** Most fields and messages the decoded request may hold (see {@link countDecodedFields}). */
  fields: number;
}

const KIB = 1024;
const MIB = 1024 * KIB;

/**
 * Per method. IngestSamples carries a sample of up to 15 MiB plus framing, and a sample just
 * over it must still arrive to be reported by its key: 32 MiB. StreamBatches carries at most a
 * job checkpoint of 65,536 ranks (each ~100 bytes of rank, epoch and resume token, more with
 * out-of-order deliveries in its bitmap) and 64 mixture sources: 16 MiB, and 1,200,000 fields
 * (a checkpoint rank is a message of 3 fields; the budget leaves room for a nested base).
 * CreateSplits names parts, groups, class ratios and metadata filters: 1 MiB. The others name
 * a dataset and a split: 64 KiB.
 */
export const LOADER_REQUEST_LIMITS: Readonly<Record<string, RequestLimit>> = {
  IngestSamples: { bytes: 32 * MIB, fields: 4_000_000 },
  StreamBatches: { bytes: 16 * MIB, fields: 1_200_000 },
  CreateSplits: { bytes: 1 * MIB, fields: 200_000 },
  DescribeDataset: { bytes: 64 * KIB, fields: 10_000 },
  ListSplits: { bytes: 64 * KIB, fields: 10_000 },
  GetSplit: { bytes: 64 * KIB, fields: 10_000 },
  GetLedger: { bytes: 64 * KIB, fields: 10_000 },
};

/** Requests of any other service (health, reflection): a few names. */
export const OTHER_REQUEST_LIMIT: RequestLimit = { bytes: 64 * KIB, fields: 10_000 };

/** The largest limit of all: the server's own `grpc.max_receive_message_length`. */
export const MAX_REQUEST_BYTES = Math.max(
  ...Object.values(LOADER_REQUEST_LIMITS).map((l) => l.bytes),
  OTHER_REQUEST_LIMIT.bytes,
);

/** The limit of a call's method, by its path (`/scylla_loader.v1.LoaderService/GetSplit`). */
export function requestLimitOf(path: string): RequestLimit {
  if (path.startsWith('/scylla_loader.')) {
    const rpc = path.slice(path.lastIndexOf('/') + 1);
    return LOADER_REQUEST_LIMITS[rpc] ?? OTHER_REQUEST_LIMIT;
  }
  return OTHER_REQUEST_LIMIT;
}
