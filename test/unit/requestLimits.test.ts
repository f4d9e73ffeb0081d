import { describe, expect, it } from 'vitest';
import { capName, MAX_QUOTED_NAME_CHARS } from '../../src/server/auth/capName.js';
import { peerAddress } from '../../src/server/admission.js';
import { checkOpenAccess, isLoopback } from '../../src/server/config/checkOpenAccess.js';
import { serverConfigSchema } from '../../src/server/config/serverConfig.js';
import {
  countDecodedFields,
  type MessageShape,
} from '../../src/server/limits/countDecodedFields.js';
import {
  LOADER_REQUEST_LIMITS,
  MAX_REQUEST_BYTES,
  requestLimitOf,
} from '../../src/server/limits/requestLimits.js';
import { loaderPackageDefinition } from '../../src/proto/loadLoaderProto.js';
import { LoaderError } from '../../src/core/index.js';

const definition = loaderPackageDefinition();
const shapeOf = (name: string): MessageShape | undefined =>
  (definition[name.replace(/^\./, '')] as { type?: MessageShape } | undefined)?.type;
const STREAM = 'scylla_loader.v1.StreamBatchesRequest';

describe('countDecodedFields', () => {
  it('counts an empty sub-message as one object plus its type fields, whatever its 3 bytes', () => {
    const source = shapeOf('scylla_loader.v1.StreamSource')!;
    const top = shapeOf(STREAM)!.field.length;
    const body = Buffer.from([0x92, 0x01, 0x00, 0x92, 0x01, 0x00]);
    expect(countDecodedFields(body, STREAM, shapeOf, 1e9)).toBe(
      top + 2 * (1 + source.field.length),
    );
  });

  it('stops at the budget without reading on', () => {
    const body = Buffer.alloc(3 * 1_000_000);
    for (let i = 0; i < body.length; i += 3) body.set([0x92, 0x01, 0x00], i);
    expect(countDecodedFields(body, STREAM, shapeOf, 1000)).toBe(1001);
  });

  it('keeps a real request far under its budget', () => {
    // dataset "mnist" (field 1), batch size 64 (field 3), a 2 kB resume token (bytes).
    const token = Buffer.alloc(2000, 7);
    const body = Buffer.concat([
      Buffer.from([0x0a, 5]),
      Buffer.from('mnist'),
      Buffer.from([0x18, 64]),
      // field 8 would be some other scalar; take resume_token's number from the descriptor
      encodeBytesField(fieldNumber(STREAM, 'resumeToken'), token),
    ]);
    const n = countDecodedFields(body, STREAM, shapeOf, 1e9);
    expect(n).toBeLessThan(100);
    expect(n).toBeLessThan(LOADER_REQUEST_LIMITS.StreamBatches!.fields);
  });

  it('counts on past a group, which protobufjs skips before decoding what follows', () => {
    // Start and end of a group on field 1000 (a varint inside), then many empty sources.
    const group = Buffer.from([0xc3, 0x3e, 0x08, 0x01, 0xc4, 0x3e]);
    const sources = Buffer.alloc(3 * 10_000);
    for (let i = 0; i < sources.length; i += 3) sources.set([0x92, 0x01, 0x00], i);
    expect(countDecodedFields(Buffer.concat([group, sources]), STREAM, shapeOf, 1000)).toBe(1001);
  });

  it("counts a map entry with its value message's fields, not as one", () => {
    const SAMPLE = 'scylla_loader.v1.IngestSample';
    const metadata = fieldNumber(SAMPLE, 'metadata');
    // One entry: key "k" (field 1), value an empty MetadataValue (field 2).
    const entry = Buffer.from([0x0a, 0x01, 0x6b, 0x12, 0x00]);
    const body = encodeBytesField(metadata, entry);
    const top = shapeOf(SAMPLE)!.field.length;
    const value = shapeOf('scylla_loader.v1.MetadataValue')!.field.length;
    // The entry (1 + its 2 fields), its key (1), its value (1 + the value's fields).
    expect(countDecodedFields(body, SAMPLE, shapeOf, 1e9)).toBe(top + 3 + 1 + 1 + value);
  });

  it('survives bodies that are not protobuf (the decoder refuses them later)', () => {
    for (const bytes of [[0xff, 0xff, 0xff], [0x92], [0x92, 0x01, 0x7f], [0x0b]]) {
      expect(countDecodedFields(Buffer.from(bytes), STREAM, shapeOf, 100)).toBeLessThan(101);
    }
  });
});

describe('requestLimitOf', () => {
  it('gives IngestSamples the largest limit and everything else less', () => {
    expect(requestLimitOf('/scylla_loader.v1.LoaderService/IngestSamples').bytes).toBe(
      MAX_REQUEST_BYTES,
    );
    expect(requestLimitOf('/scylla_loader.v1.LoaderService/StreamBatches').bytes).toBeLessThan(
      MAX_REQUEST_BYTES,
    );
    expect(requestLimitOf('/grpc.health.v1.Health/Check').bytes).toBe(64 * 1024);
    expect(requestLimitOf('/scylla_loader.v1.LoaderService/Nope').bytes).toBe(64 * 1024);
  });
});

describe('capName', () => {
  it('leaves short names alone and cuts long ones, saying how much', () => {
    expect(capName('mnist')).toBe('mnist');
    const cut = capName('x'.repeat(2_000_000));
    expect(cut.length).toBeLessThan(MAX_QUOTED_NAME_CHARS + 40);
    expect(cut).toMatch(/\.\.\. \(1999800 more characters\)$/);
  });
});

describe('checkOpenAccess', () => {
  const config = (over: Record<string, unknown>) => serverConfigSchema.parse({ db: {}, ...over });

  it('refuses a non-loopback address without tokens, mTLS or the explicit setting', () => {
    expect(() => checkOpenAccess(config({ host: '0.0.0.0' }))).toThrow(LoaderError);
    expect(() => checkOpenAccess(config({ host: '0.0.0.0' }))).toThrow(
      /--auth-tokens.*--allow-unauthenticated/s,
    );
    expect(() => checkOpenAccess(config({ host: '10.1.2.3' }))).toThrow(/10\.1\.2\.3/);
  });

  it('allows loopback, tokens, mutual TLS, or an explicit yes', () => {
    expect(() => checkOpenAccess(config({ host: '127.0.0.1' }))).not.toThrow();
    expect(() => checkOpenAccess(config({ host: '::1' }))).not.toThrow();
    expect(() =>
      checkOpenAccess(config({ host: '0.0.0.0', authTokensFile: '/t.json' })),
    ).not.toThrow();
    expect(() =>
      checkOpenAccess(
        config({ host: '0.0.0.0', tls: { certFile: 'c', keyFile: 'k', clientCaFile: 'ca' } }),
      ),
    ).not.toThrow();
    expect(() =>
      checkOpenAccess(config({ host: '0.0.0.0', allowUnauthenticated: true })),
    ).not.toThrow();
    // TLS without client certificates authenticates nobody.
    expect(() =>
      checkOpenAccess(config({ host: '0.0.0.0', tls: { certFile: 'c', keyFile: 'k' } })),
    ).toThrow(LoaderError);
  });

  it('knows loopback addresses', () => {
    expect(['127.0.0.1', '127.5.0.1', '::1', '[::1]', 'localhost'].map(isLoopback)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['0.0.0.0', '::', '192.168.1.1', 'example.com'].map(isLoopback)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('peerAddress', () => {
  it('drops the port of IPv4 and IPv6 peers', () => {
    expect(peerAddress({ getPeer: () => '127.0.0.1:5678' })).toBe('127.0.0.1');
    expect(peerAddress({ getPeer: () => '::1:5678' })).toBe('::1');
    expect(peerAddress({ getPeer: () => 'unix:/tmp/s' })).toBe('unix:/tmp/s');
  });
});

function fieldNumber(type: string, name: string): number {
  return shapeOf(type)!.field.find((f) => (f as unknown as { name: string }).name === name)!.number;
}

function encodeBytesField(number: number, bytes: Buffer): Buffer {
  const varint = (n: number): number[] => {
    const out: number[] = [];
    while (n >= 0x80) {
      out.push((n & 0x7f) | 0x80);
      n = Math.floor(n / 128);
    }
    out.push(n);
    return out;
  };
  return Buffer.concat([Buffer.from([...varint(number * 8 + 2), ...varint(bytes.length)]), bytes]);
}
