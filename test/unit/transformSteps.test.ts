import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import type { TransformOptions } from '../../src/client/TransformOptions.js';
import { toProtoTransform } from '../../src/client/toProtoRequest.js';
import {
  TRANSFORM_STEPS,
  type TransformField,
  transformFields,
  transformStepsJson,
  validateTransformRequest,
} from '../../src/core/transform/steps.js';
import type { TransformSpec } from '../../src/core/transform/TransformSpec.js';

/**
 * The transform is described once, in `src/core/transform/steps.ts`. These tests fail, naming
 * the file to change, when the proto, the TypeScript SDK or the Python client (through
 * `transform_steps.json`) lacks a step's field or has one the description lacks.
 */

const PROTO = fileURLToPath(new URL('../../proto/scylla_loader/v1/loader.proto', import.meta.url));
/** The proto with its own field names (snake_case), for comparing names. */
const asWritten = new protobuf.Root().loadSync(PROTO, { keepCase: true }).resolveAll();
/** The proto as the Node server and SDK load it (camelCase), for encoding. */
const asLoaded = protobuf.loadSync(PROTO).resolveAll();
const message = (name: string, root = asWritten): protobuf.Type =>
  root.lookupType(`scylla_loader.v1.${name}`);

/**
 * Every field of the SDK's `TransformOptions`, set to a value other than its default. Typed
 * `Required<...>`: a field the SDK gains must be listed here (tsc), and the test below then
 * requires it in the description.
 */
const EVERY_OPTION: Required<TransformOptions> = {
  channels: 1,
  resize: 256,
  centerCrop: { height: 200, width: 180 },
  randomResizedCrop: { height: 224, width: 192, scale: [0.25, 0.75], ratio: [0.5, 2] },
  horizontalFlip: 0.5,
  interpolation: 'bicubic',
  output: 'jpeg',
  quality: 80,
  badImagePolicy: 'skip',
  masks: true,
};

/** {@link EVERY_OPTION} with one field of each oneof (the first, or the one named). */
function withOneOf(keep: string): TransformOptions {
  const options: Record<string, unknown> = { ...EVERY_OPTION };
  for (const f of transformFields()) {
    if (f.type.kind === 'message' && f.type.oneof !== undefined && f.sdk !== keep) {
      delete options[f.sdk];
    }
  }
  return options as unknown as TransformOptions;
}

const protoKey = (name: string): string =>
  name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

describe('the transform description (steps.ts)', () => {
  it('lists the steps in the order they apply', () => {
    expect(TRANSFORM_STEPS.map((s) => s.name)).toEqual([
      'decode',
      'resize',
      'crop',
      'flip',
      'output',
      'masks',
    ]);
  });

  it('matches proto Transform field for field (names, numbers, types, oneofs, enums)', () => {
    const transform = message('Transform');
    const described = new Map(transformFields().map((f) => [f.proto, f]));
    for (const field of transform.fieldsArray) {
      expect(
        described.has(field.name),
        `proto Transform.${field.name} is in no step of src/core/transform/steps.ts`,
      ).toBe(true);
    }
    for (const f of described.values()) {
      const field = transform.fields[f.proto];
      expect(
        field,
        `step field ${f.proto} is not in message Transform of proto/scylla_loader/v1/loader.proto`,
      ).toBeDefined();
      expect(field!.id, `Transform.${f.proto}'s number`).toBe(f.number);
      checkType(f, field!);
    }
  });

  it('is what the TypeScript SDK takes: TransformOptions has exactly the fields', () => {
    const sdk = Object.keys(EVERY_OPTION).sort();
    const described = transformFields()
      .map((f) => f.sdk)
      .sort();
    expect(sdk, 'src/client/TransformOptions.ts and the steps of steps.ts differ').toEqual(
      described,
    );
    for (const f of transformFields()) {
      if (f.type.kind !== 'message') continue;
      const value = EVERY_OPTION[f.sdk as keyof TransformOptions] as object;
      expect(Object.keys(value).sort(), `TransformOptions.${f.sdk}`).toEqual(
        f.type.fields.map((s) => s.sdk).sort(),
      );
    }
  });

  it('toProtoTransform sets every proto field from the SDK options', () => {
    const transform = message('Transform', asLoaded);
    const oneofFields = transformFields().filter(
      (f) => f.type.kind === 'message' && f.type.oneof !== undefined,
    );
    for (const kept of oneofFields) {
      const wire = toProtoTransform(withOneOf(kept.sdk)) as Record<string, unknown>;
      // Encoded and decoded: what the server reads.
      const decoded = transform.toObject(transform.decode(transform.encode(wire).finish()), {
        enums: String,
        defaults: false,
      }) as Record<string, unknown>;
      for (const f of transformFields()) {
        const skipped = oneofFields.includes(f) && f !== kept;
        const key = protoKey(f.proto);
        if (skipped) {
          expect(decoded[key], `${key} (the other crop)`).toBeUndefined();
          continue;
        }
        expect(decoded[key], `toProtoTransform leaves ${key} unset`).toBeDefined();
        if (f.type.kind !== 'message') continue;
        const nested = decoded[key] as Record<string, unknown>;
        for (const name of f.type.fields.flatMap((s) => s.proto)) {
          expect(
            nested[protoKey(name)],
            `toProtoTransform leaves ${key}.${name} unset`,
          ).toBeDefined();
        }
      }
    }
    expect(() => toProtoTransform(EVERY_OPTION)).toThrow(
      'transform takes centerCrop or randomResizedCrop, not both',
    );
  });

  it('validates what the SDK sends into a spec with every step, keys in proto order', () => {
    const limits = { batchSize: 8, maxTransformSide: 4096, maxMessageBytes: 64 << 20 };
    const wire = toProtoTransform(withOneOf('randomResizedCrop'));
    const spec: TransformSpec = validateTransformRequest(
      // Masks need RAW output: this JPEG transform checks every other step (masks: below).
      { ...wire, crop: 'randomResizedCrop', masks: false } as Parameters<
        typeof validateTransformRequest
      >[0],
      limits,
    );
    // Resume tokens fingerprint the spec as JSON: this order is part of every token issued.
    expect(Object.keys(spec)).toEqual([
      'channels',
      'resize',
      'crop',
      'flipProbability',
      'interpolation',
      'output',
      'badImage',
    ]);
    expect(spec).toEqual({
      channels: 1,
      resize: 256,
      crop: {
        kind: 'random-resized',
        height: 224,
        width: 192,
        scale: [0.25, 0.75],
        ratio: [0.5, 2],
      },
      flipProbability: 0.5,
      interpolation: 'bicubic',
      output: { format: 'jpeg', quality: 80 },
      badImage: 'skip',
    });
  });

  it('puts masks last in the spec, and leaves the key out without them (token fingerprints)', () => {
    const limits = { batchSize: 8, maxTransformSide: 4096, maxMessageBytes: 64 << 20 };
    const raw = toProtoTransform({
      channels: 3,
      randomResizedCrop: { height: 64, width: 64 },
      masks: true,
    });
    const request = { ...raw, crop: 'randomResizedCrop' } as Parameters<
      typeof validateTransformRequest
    >[0];
    const spec = validateTransformRequest(request, limits);
    expect(Object.keys(spec).at(-1)).toBe('masks');
    expect(spec.masks).toBe(true);
    expect('masks' in validateTransformRequest({ ...request, masks: false }, limits)).toBe(false);
    expect(() =>
      validateTransformRequest({ ...request, output: 'TRANSFORM_OUTPUT_JPEG' }, limits),
    ).toThrow('transform.masks needs RAW output');
    // A batch's masks count toward the response limit: 8 x 64 x 64 x (3 + 1) bytes.
    expect(() =>
      validateTransformRequest(request, {
        ...limits,
        maxMessageBytes: (1 << 20) + 8 * 64 * 64 * 3,
      }),
    ).toThrow('with their 64x64x1 masks');
  });

  it("is what the Python client's transform_steps.json holds (npx vitest run -u this file writes it)", async () => {
    const file = '../../clients/python/src/scylla_loader/transform_steps.json';
    // As prettier writes it (the lint checks every JSON file of the tree).
    const options = await prettier.resolveConfig(fileURLToPath(new URL(file, import.meta.url)));
    const json = await prettier.format(transformStepsJson(), { ...options, parser: 'json' });
    await expect(json).toMatchFileSnapshot(file);
  });
});

function checkType(f: TransformField, field: protobuf.Field): void {
  const where = `Transform.${f.proto}`;
  switch (f.type.kind) {
    case 'uint32':
    case 'double':
      expect(field.type, where).toBe(f.type.kind);
      return;
    case 'bool':
      expect(field.type, where).toBe('bool');
      return;
    case 'enum': {
      const e = field.resolvedType as protobuf.Enum;
      expect(e, `${where} is an enum`).toBeInstanceOf(protobuf.Enum);
      expect(e.name, where).toBe(f.type.protoEnum);
      const { prefix, values } = f.type;
      const names = [`${prefix}UNSPECIFIED`, ...values.map((v) => `${prefix}${v.toUpperCase()}`)];
      expect(Object.entries(e.values), `enum ${e.name}`).toEqual(names.map((n, i) => [n, i]));
      return;
    }
    case 'message': {
      const m = field.resolvedType as protobuf.Type;
      expect(m, `${where} is a message`).toBeInstanceOf(protobuf.Type);
      expect(m.name, where).toBe(f.type.protoMessage);
      expect(field.partOf?.name, `${where}'s oneof`).toBe(f.type.oneof);
      const described = f.type.fields.flatMap((s) =>
        s.proto.map((name, i) => [name, s.numbers[i]!] as const),
      );
      expect(
        m.fieldsArray.map((x) => [x.name, x.id] as const),
        `message ${m.name}'s fields and numbers`,
      ).toEqual(described);
      for (const s of f.type.fields) {
        for (const name of s.proto) {
          expect(m.fields[name]!.type, `${m.name}.${name}`).toBe(
            s.type === 'uint32' ? 'uint32' : 'double',
          );
        }
      }
    }
  }
}
