import { status } from '@grpc/grpc-js';
import type { IngestSample } from '../generated/scylla_loader/v1/IngestSample.js';
import { MAX_SAMPLE_BYTES, sampleProblem } from '../core/requests.js';
import { ClientError } from './ClientError.js';
import type { BadSamplePolicyName, IngestSampleInput, SkippedSampleInfo } from './IngestOptions.js';
import { toProtoSample, type ProtoSample } from './toProtoSample.js';

/** Default of `IngestOptions.samplesPerRequest`. */
export const DEFAULT_SAMPLES_PER_REQUEST = 64;

/** Sample bytes a request is filled to at most (a larger sample goes alone). */
export const REQUEST_BYTES = 4 * 1024 * 1024;

/**
 * Largest sample sent. The loader accepts requests of up to 32 MiB so that a sample just over
 * its 15 MiB limit still reaches it and is judged by its key; one too large for any request is
 * judged here instead, with the same rule and words.
 */
const MAX_WIRE_SAMPLE_BYTES = 30 * 1024 * 1024;

/** A request's samples, ready to send (the target is added to a call's first request). */
export interface PreparedRequest {
  samples: IngestSample[];
  /** The inputs the samples were made from (the first request's infer the columns). */
  inputs: IngestSampleInput[];
}

/** Settings of an {@link IngestRequestSource}. */
export interface IngestRequestSourceOptions {
  samplesPerRequest: number;
  policy: BadSamplePolicyName;
  /** Method path, for errors. */
  path: string;
  /** Told of a sample too large to send under the `skip` policy. */
  onLocalSkip: (skip: SkippedSampleInfo) => void;
}

/**
 * Reads an ingest's samples and groups them into requests: up to `samplesPerRequest` samples
 * and {@link REQUEST_BYTES} of sample bytes each (a larger sample goes alone). The samples are
 * read only as far as the next request needs, so the caller's backpressure reaches the source.
 *
 * @internal
 */
export class IngestRequestSource {
  readonly #iterator: Iterator<IngestSampleInput> | AsyncIterator<IngestSampleInput>;
  readonly #options: IngestRequestSourceOptions;
  /** A sample read that did not fit the request before: the next one starts with it. */
  #held: { input: IngestSampleInput; proto: ProtoSample } | undefined;
  #position = 0;
  #exhausted = false;

  constructor(
    samples: Iterable<IngestSampleInput> | AsyncIterable<IngestSampleInput>,
    options: IngestRequestSourceOptions,
  ) {
    this.#iterator =
      Symbol.asyncIterator in samples
        ? samples[Symbol.asyncIterator]()
        : (samples as Iterable<IngestSampleInput>)[Symbol.iterator]();
    this.#options = options;
  }

  /** The next request, or undefined once the samples are all sent. */
  async next(): Promise<PreparedRequest | undefined> {
    const request: PreparedRequest = { samples: [], inputs: [] };
    let bytes = 0;
    for (;;) {
      const item = this.#held ?? (await this.#read());
      this.#held = undefined;
      if (item === undefined) break;
      if (request.samples.length > 0 && bytes + item.proto.wireBytes > REQUEST_BYTES) {
        this.#held = item;
        break;
      }
      request.samples.push(item.proto.sample);
      request.inputs.push(item.input);
      bytes += item.proto.wireBytes;
      if (request.samples.length >= this.#options.samplesPerRequest || bytes >= REQUEST_BYTES) {
        break;
      }
    }
    return request.samples.length > 0 ? request : undefined;
  }

  /** Lets the source go (its `finally` blocks run); the ingest is over. */
  close(): void {
    if (this.#exhausted) return;
    this.#exhausted = true;
    // Not awaited: a source stuck in a read must not hold up the ingest's error.
    void Promise.resolve(this.#iterator.return?.()).catch(() => undefined);
  }

  /** The next sample that can be sent, converted; undefined at the end. */
  async #read(): Promise<{ input: IngestSampleInput; proto: ProtoSample } | undefined> {
    while (!this.#exhausted) {
      const next = await this.#iterator.next();
      if (next.done) {
        this.#exhausted = true;
        return undefined;
      }
      const input = next.value;
      const proto = toProtoSample(input, this.#position++);
      if (proto.wireBytes <= MAX_WIRE_SAMPLE_BYTES) return { input, proto };
      this.#tooLarge(input, proto);
    }
    return undefined;
  }

  /** A sample no request can carry: skipped, or the end of the ingest, by the policy. */
  #tooLarge(input: IngestSampleInput, proto: ProtoSample): void {
    const problem =
      sampleProblem(
        {
          data: input.data as Buffer,
          label: input.label ?? null,
          labelBlob: input.labelBlob as Buffer | undefined,
        },
        // Labels are the server's to judge (a call may be unlabelled); only sizes are here.
        { labelNames: [], unlabelled: true },
      ) ??
      `is ${proto.wireBytes} bytes with its metadata, over the limit of ${MAX_SAMPLE_BYTES} bytes`;
    if (this.#options.policy === 'skip') {
      this.#options.onLocalSkip({ sourceKey: input.sourceKey, reason: problem });
      return;
    }
    throw new ClientError(
      this.#options.path,
      status.INVALID_ARGUMENT,
      `sample ${JSON.stringify(input.sourceKey)} ${problem} (found by the client: no request ` +
        'can carry it); the requests acknowledged before are stored',
    );
  }
}
