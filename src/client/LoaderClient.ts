import { credentials as grpcCredentials } from '@grpc/grpc-js';
import type { DescribeDatasetResponse__Output } from '../generated/scylla_loader/v1/DescribeDatasetResponse.js';
import type { CreateSplitsResponse__Output } from '../generated/scylla_loader/v1/CreateSplitsResponse.js';
import type { GetLedgerResponse__Output } from '../generated/scylla_loader/v1/GetLedgerResponse.js';
import type { GetSplitResponse__Output } from '../generated/scylla_loader/v1/GetSplitResponse.js';
import type { ListSplitsResponse__Output } from '../generated/scylla_loader/v1/ListSplitsResponse.js';
import type { LoaderServiceClient } from '../generated/scylla_loader/v1/LoaderService.js';
import { bearerInterceptor } from './bearerInterceptor.js';
import { channelOptions } from './channelOptions.js';
import type { CreateSplitsOptions } from './CreateSplitsOptions.js';
import type { DatasetDescription } from './DatasetDescription.js';
import type { DecodedBatch } from './DecodedBatch.js';
import { inferColumns } from './inferColumns.js';
import type { IngestOptions, IngestSampleInput, IngestSummary } from './IngestOptions.js';
import { DEFAULT_SAMPLES_PER_REQUEST, IngestRequestSource } from './IngestRequestSource.js';
import type { LedgerQuery, LedgerResult } from './LedgerTypes.js';
import type { LoaderClientOptions, ReconnectOptions } from './LoaderClientOptions.js';
import { loaderService } from './loaderService.js';
import { resumableBatches } from './resumableBatches.js';
import { resumableIngest } from './resumableIngest.js';
import type { SplitSet } from './SplitSet.js';
import type { StreamBatchesOptions } from './StreamBatchesOptions.js';
import type { CallOptions, StreamCallOptions } from './StreamCallOptions.js';
import { checkCreateSplits } from './checkCreateSplits.js';
import { toCreateSplitsRequest } from './toCreateSplitsRequest.js';
import { toDatasetDescription } from './toDatasetDescription.js';
import { toLedgerRequest, toLedgerResult } from './toLedgerResult.js';
import { toProtoRequest } from './toProtoRequest.js';
import { toSplitSet } from './toSplitSet.js';
import { tlsCredentials } from './tlsCredentials.js';
import { unaryCall } from './unaryCall.js';

/**
 * Client of a scylla-loader server (or of a load balancer in front of several replicas).
 * One client holds a channel for unary calls and a small pool for streams (see
 * `streamChannels`); share it between streams and `close()` it when done.
 *
 * @example
 * ```ts
 * import { ClientError, LoaderClient } from 'scylla-loader/client';
 *
 * const client = new LoaderClient('localhost:50051');
 * const controller = new AbortController();
 * try {
 *   const batches = client.streamBatches(
 *     { dataset: 'mnist', split: 'main/train', batchSize: 256, seed: 42n, epochs: 10,
 *       rank: 0, worldSize: 1 },
 *     { signal: controller.signal, onReconnect: (r) => console.warn('resuming', r) },
 *   );
 *   for await (const batch of batches) {
 *     // batch.samples[i]: the i-th sample's bytes (a view, no copy); batch.labels[i]: its label
 *     await trainStep(batch.samples, batch.labels);
 *     if (batch.lastInEpoch) await checkpoint(batch.epoch, batch.resumeToken);
 *   }
 * } catch (error) {
 *   if (error instanceof ClientError) console.error(error.codeName, error.details);
 *   throw error;
 * } finally {
 *   client.close();
 * }
 * ```
 */
export class LoaderClient {
  readonly #client: LoaderServiceClient;
  readonly #reconnect: Required<ReconnectOptions>;
  readonly #maxBufferedBatches: number;
  /** Opens stream channel k (1 and up) of the pool; channel 0 is `#client`. */
  readonly #openStreamChannel: () => LoaderServiceClient;
  readonly #streamChannels: LoaderServiceClient[] = [];
  readonly #streamChannelCount: number;
  #nextStreamChannel = 0;
  readonly #streamBatchesPath: string;
  readonly #describeDatasetPath: string;
  readonly #createSplitsPath: string;
  readonly #listSplitsPath: string;
  readonly #getSplitPath: string;
  readonly #getLedgerPath: string;
  readonly #ingestSamplesPath: string;

  /**
   * @param address - The server's `host:port` (or any grpc-js target, e.g. `dns:///loader:50051`).
   * @param options - TLS, token, flow-control window, limits, keepalive, reconnection.
   * @throws TypeError when `tls` and `credentials` are both set, `tls.cert` comes without
   *   `tls.key` (or the reverse), or a PEM file named in `tls` cannot be read.
   */
  constructor(address: string, options: LoaderClientOptions = {}) {
    if (options.tls !== undefined && options.credentials !== undefined) {
      throw new TypeError('set either tls or credentials, not both');
    }
    const Service = loaderService();
    const credentials =
      options.tls !== undefined
        ? tlsCredentials(options.tls)
        : (options.credentials ?? grpcCredentials.createInsecure());
    const count = options.streamChannels ?? 8;
    if (!Number.isInteger(count) || count < 1 || count > 1024) {
      throw new TypeError(`streamChannels must be an integer from 1 to 1024, got ${count}`);
    }
    const grpcOptions = {
      ...channelOptions(options),
      ...(options.token === undefined ? {} : { interceptors: [bearerInterceptor(options.token)] }),
    };
    this.#client = new Service(address, credentials, grpcOptions);
    // A local subchannel pool gives the channel a connection of its own: grpc-js otherwise
    // shares one connection between channels with the same target and options.
    this.#openStreamChannel = () =>
      new Service(address, credentials, { ...grpcOptions, 'grpc.use_local_subchannel_pool': 1 });
    this.#streamChannelCount = count;
    const reconnect = options.reconnect ?? {};
    this.#reconnect = {
      attempts: reconnect.attempts ?? 10,
      initialBackoffMs: reconnect.initialBackoffMs ?? 100,
      maxBackoffMs: reconnect.maxBackoffMs ?? 5_000,
      retryOnResourceExhausted: reconnect.retryOnResourceExhausted ?? true,
    };
    this.#maxBufferedBatches = options.maxBufferedBatches ?? 2;
    this.#streamBatchesPath = Service.service.StreamBatches.path;
    this.#describeDatasetPath = Service.service.DescribeDataset.path;
    this.#createSplitsPath = Service.service.CreateSplits.path;
    this.#listSplitsPath = Service.service.ListSplits.path;
    this.#getSplitPath = Service.service.GetSplit.path;
    this.#getLedgerPath = Service.service.GetLedger.path;
    this.#ingestSamplesPath = Service.service.IngestSamples.path;
  }

  /**
   * Streams one rank's batches of a split. Iterate it with `for await`; the call starts at
   * the first iteration.
   *
   * - Resumption: when the stream breaks for a reason that a new call may not meet again
   *   (UNAVAILABLE: a dropped connection, a killed or restarting server; a CANCELLED the
   *   client did not cause; a transport-level RST_STREAM; RESOURCE_EXHAUSTED, unless turned
   *   off), the same request is sent again with the resume token of the last batch yielded,
   *   after an exponential backoff with jitter, so every batch is yielded exactly once. After
   *   `reconnect.attempts` failures in a row without a batch, the last error is thrown.
   * - Errors: a {@link ClientError} with the status (e.g. INVALID_ARGUMENT, NOT_FOUND,
   *   DATA_LOSS, DEADLINE_EXCEEDED); DATA_LOSS also for a batch whose sizes do not add up.
   * - Cancellation: aborting `signal` cancels the call and the iteration throws the signal's
   *   reason; leaving the loop early (`break`, an exception) cancels the call too.
   * - Backpressure: at most `maxBufferedBatches` batches are read ahead of the consumer; then
   *   the client stops reading and HTTP/2 flow control holds the server back.
   *
   * @param request - The request's fields; invalid values throw a RangeError here, at once.
   * @param callOptions - `signal`, `deadline` (for the whole stream), `onReconnect`.
   */
  streamBatches(
    request: StreamBatchesOptions,
    callOptions: StreamCallOptions = {},
  ): AsyncIterable<DecodedBatch> {
    const protoRequest = toProtoRequest(request);
    const channel = this.#streamChannel();
    return resumableBatches(
      protoRequest,
      {
        open: (message, deadline) =>
          channel.streamBatches(message, deadline === undefined ? {} : { deadline }),
        path: this.#streamBatchesPath,
        reconnect: this.#reconnect,
        maxBufferedBatches: this.#maxBufferedBatches,
      },
      callOptions,
    );
  }

  /**
   * Describes a dataset: sample count, bytes, classes, metadata columns, splits.
   *
   * @throws {@link ClientError} with the call's status (e.g. NOT_FOUND for an unknown dataset);
   *   the signal's reason when `signal` aborts.
   */
  describeDataset(dataset: string, callOptions: CallOptions = {}): Promise<DatasetDescription> {
    return unaryCall<DescribeDatasetResponse__Output, DatasetDescription>(
      (options, callback) => this.#client.describeDataset({ dataset }, options, callback),
      this.#describeDatasetPath,
      callOptions,
      toDatasetDescription,
    );
  }

  /**
   * Makes a split set from the dataset's metadata and stores it: named parts with weights
   * (e.g. `{ train: 7, val: 2, test: 1 }`) or k folds, whole groups per part, class targets,
   * filters. Stream its parts as `<set>/<part>` (see {@link SplitSet.streamableSplits}).
   * The server reads the whole metadata table, which takes tens of seconds for 10^6+ samples:
   * give a generous deadline; aborting `signal` stops the server's work.
   *
   * @example
   * ```ts
   * const set = await client.createSplits({
   *   dataset: 'pathology', name: 'main', parts: { train: 7, val: 2, test: 1 },
   *   groupBy: 'patient_id', classTargets: 'balanced', seed: 1,
   * });
   * for (const p of set.parts) console.log(p.name, p.size, p.classCounts);
   * ```
   *
   * @param request - The set to make; a value the wire cannot carry rejects with a RangeError,
   *   at once, and one the core's split request validator refuses (names, weights, ratios,
   *   folds, filters) with a ClientError INVALID_ARGUMENT, before anything is sent.
   * @throws {@link ClientError}: ALREADY_EXISTS when the name exists (set `newVersion`),
   *   INVALID_ARGUMENT for bad parameters or targets that cannot be met (the details say what
   *   is possible; set `allowShortfall` to accept the best feasible split), NOT_FOUND for an
   *   unknown dataset.
   */
  createSplits(request: CreateSplitsOptions, callOptions: CallOptions = {}): Promise<SplitSet> {
    let message;
    try {
      message = toCreateSplitsRequest(request);
      checkCreateSplits(request, this.#createSplitsPath);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return unaryCall<CreateSplitsResponse__Output, SplitSet>(
      (options, callback) => this.#client.createSplits(message, options, callback),
      this.#createSplitsPath,
      callOptions,
      (response) => toSplitSet(response.splitSet),
    );
  }

  /**
   * Reads a job's training ledger (streams that named `jobId`): a range of one rank's batches
   * of an epoch, with each sample's source key and the columns asked for, or every appearance
   * of one sample in the job.
   *
   * @example
   * ```ts
   * const { batches } = await client.getLedger('run-7', { batches: { epoch: 2, rank: 0, first: 41, last: 44 } });
   * const { appearances } = await client.getLedger('run-7', { sample: { sourceKey: 'train/cat/1.jpg' } });
   * ```
   *
   * @throws {@link ClientError}: NOT_FOUND for a job without a ledger, PERMISSION_DENIED when
   *   the token's grant lacks one of the job's datasets, INVALID_ARGUMENT for a bad id or a
   *   range over 1,000 batches or 65,536 samples.
   */
  getLedger(
    jobId: string,
    query: LedgerQuery,
    callOptions: CallOptions = {},
  ): Promise<LedgerResult> {
    const path = this.#getLedgerPath;
    return unaryCall<GetLedgerResponse__Output, LedgerResult>(
      (options, callback) =>
        this.#client.getLedger(toLedgerRequest(jobId, query), options, callback),
      path,
      callOptions,
      (response) => toLedgerResult(response, path),
    );
  }

  /**
   * Lists a dataset's split sets, every version, sorted by name and newest version first.
   *
   * @throws {@link ClientError} with the call's status (e.g. NOT_FOUND for an unknown dataset).
   */
  listSplits(dataset: string, callOptions: CallOptions = {}): Promise<SplitSet[]> {
    return unaryCall<ListSplitsResponse__Output, SplitSet[]>(
      (options, callback) => this.#client.listSplits({ dataset }, options, callback),
      this.#listSplitsPath,
      callOptions,
      (response) => response.splitSets.map(toSplitSet),
    );
  }

  /**
   * Describes one split set: its latest version unless `version` is given.
   *
   * @throws {@link ClientError} with the call's status (NOT_FOUND for an unknown dataset, set
   *   or version).
   */
  getSplit(
    request: { dataset: string; name: string; version?: number },
    callOptions: CallOptions = {},
  ): Promise<SplitSet> {
    const version = request.version ?? 0;
    if (!Number.isInteger(version) || version < 0 || version > 2 ** 32 - 1) {
      return Promise.reject(new RangeError(`version must be a positive integer, got ${version}`));
    }
    return unaryCall<GetSplitResponse__Output, SplitSet>(
      (options, callback) =>
        this.#client.getSplit(
          { dataset: request.dataset, name: request.name, version },
          options,
          callback,
        ),
      this.#getSplitPath,
      callOptions,
      (response) => toSplitSet(response.splitSet),
    );
  }

  /**
   * Writes samples into a dataset through the loader (IngestSamples), for pipelines without
   * database credentials; the dataset is made when absent, with the loader's replication.
   * Needs a token with role writer (or admin) for the dataset when the loader has tokens.
   *
   * - Requests: the samples are read as they are sent, in requests of up to
   *   `samplesPerRequest` samples or 4 MiB; at most `requestsInFlight` requests wait for
   *   their acknowledgement, and the samples are not read further meanwhile (backpressure).
   * - Resumption: when the call breaks for a reason a new call may not meet again (as for
   *   {@link streamBatches}: UNAVAILABLE, a CANCELLED the client did not cause...), a new
   *   call sends the unacknowledged requests again after a backoff. A sample's id derives
   *   from its key and a stored sample is not written again, so every sample ends up stored
   *   once. After `reconnect.attempts` breaks in a row without an acknowledgement, the last
   *   error is thrown.
   * - Errors: a {@link ClientError}: INVALID_ARGUMENT for a bad target (dataset name, column
   *   types, class names other than the stored ones) or, under the `fail` policy, for the
   *   first sample against the rules (its key, the rule and the limit in the details; the
   *   requests acknowledged before are stored); PERMISSION_DENIED without the grant. A
   *   TypeError naming the sample when one of the wrong shape is read (no key, data that is
   *   not a Uint8Array...); an error of the samples' own iterable is thrown as it is. A
   *   RangeError for invalid options.
   * - Cancellation: aborting `signal` cancels the call (the loader starts no further write)
   *   and rejects with the signal's reason; `deadline` bounds the whole ingest.
   *
   * @example
   * ```ts
   * const summary = await client.ingest('photos', readSamples(), {
   *   labelNames: ['cat', 'dog'],
   *   columns: { photographer: 'text', year: 'int' },
   *   badSamplePolicy: 'skip',
   *   onProgress: (p) => console.log(p.acknowledged),
   * });
   * console.log(summary.written, summary.alreadyPresent, summary.skippedSamples);
   * ```
   *
   * @param dataset - Dataset (keyspace) name.
   * @param samples - The samples, a (sync or async) iterable read once, as requests go out.
   * @param options - Columns, class names, bad-sample policy, request sizes, progress,
   *   `signal` and `deadline`.
   */
  async ingest(
    dataset: string,
    samples: Iterable<IngestSampleInput> | AsyncIterable<IngestSampleInput>,
    options: IngestOptions = {},
  ): Promise<IngestSummary> {
    const samplesPerRequest = options.samplesPerRequest ?? DEFAULT_SAMPLES_PER_REQUEST;
    const requestsInFlight = options.requestsInFlight ?? 8;
    for (const [name, value] of [
      ['samplesPerRequest', samplesPerRequest],
      ['requestsInFlight', requestsInFlight],
    ] as const) {
      if (!Number.isInteger(value) || value < 1 || value > 1_000_000) {
        throw new RangeError(`${name} must be an integer from 1 to 1000000, got ${value}`);
      }
    }
    const policy = options.badSamplePolicy ?? 'fail';
    if (policy !== 'fail' && policy !== 'skip') {
      throw new RangeError(`badSamplePolicy must be 'fail' or 'skip', got ${String(policy)}`);
    }
    const totals: IngestSummary = {
      acknowledged: 0,
      written: 0,
      alreadyPresent: 0,
      skipped: 0,
      skippedSamples: [],
      datasetSamples: 0,
    };
    const source = new IngestRequestSource(samples, {
      samplesPerRequest,
      policy,
      path: this.#ingestSamplesPath,
      onLocalSkip: (skip) => {
        totals.acknowledged++;
        totals.skipped++;
        totals.skippedSamples.push(skip);
      },
    });
    const channel = this.#streamChannel();
    return resumableIngest(
      source,
      {
        open: (deadline) => channel.ingestSamples(deadline === undefined ? {} : { deadline }),
        path: this.#ingestSamplesPath,
        reconnect: this.#reconnect,
        requestsInFlight,
        target: (first) => ({
          dataset,
          labelNames: [...(options.labelNames ?? [])],
          columns: { ...(options.columns ?? inferColumns(first?.inputs ?? [])) },
          badSamplePolicy: policy === 'skip' ? 'BAD_SAMPLE_POLICY_SKIP' : 'BAD_SAMPLE_POLICY_FAIL',
          source: options.source ?? '',
        }),
      },
      options,
      totals,
    );
  }

  /**
   * Closes the channel. Calls in progress go on until they end; new calls fail at once.
   */
  close(): void {
    this.#client.close();
    for (const c of this.#streamChannels) c.close();
  }

  /** The next channel of the stream pool, round robin, opened on first use. */
  #streamChannel(): LoaderServiceClient {
    const k = this.#nextStreamChannel++ % this.#streamChannelCount;
    if (k === 0) return this.#client;
    return (this.#streamChannels[k - 1] ??= this.#openStreamChannel());
  }
}
