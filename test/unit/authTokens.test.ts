import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { bearerToken } from '../../src/server/auth/bearerToken.js';
import {
  checkGrant,
  checkRole,
  RPC_ROLES,
  type LoaderRpc,
} from '../../src/server/auth/checkGrant.js';
import { findToken } from '../../src/server/auth/findToken.js';
import { hashToken } from '../../src/server/auth/hashToken.js';
import { newTokenEntry } from '../../src/server/auth/newTokenEntry.js';
import { parseTokensFile } from '../../src/server/auth/parseTokensFile.js';
import type { TokenGrant } from '../../src/server/auth/TokenGrant.js';
import type { Role } from '../../src/server/auth/tokensFileSchema.js';

const FILE = '/etc/loader/tokens.json';
const hex = (token: string): string => hashToken(token).toString('hex');

function file(tokens: unknown[]): string {
  return JSON.stringify({ tokens });
}

function grant(name: string, role: Role, datasets: string[]): TokenGrant {
  return { name, role, datasets: new Set(datasets), digest: hashToken(`slt_${name}`) };
}

describe('parseTokensFile', () => {
  it('reads names, roles, datasets and hashes', () => {
    const grants = parseTokensFile(
      file([
        { name: 'trainer-a', sha256: hex('slt_a'), role: 'reader', datasets: ['mnist'] },
        { name: 'etl', sha256: hex('slt_c'), role: 'writer', datasets: ['mnist', 'cifar'] },
        { name: 'ops', sha256: hex('slt_b'), role: 'admin', datasets: ['*'] },
      ]),
      FILE,
    );
    expect(grants.map((g) => [g.name, g.role, [...g.datasets]])).toEqual([
      ['trainer-a', 'reader', ['mnist']],
      ['etl', 'writer', ['mnist', 'cifar']],
      ['ops', 'admin', ['*']],
    ]);
    expect(grants[0]!.digest.equals(hashToken('slt_a'))).toBe(true);
    expect(parseTokensFile('{"tokens": []}', FILE)).toEqual([]);
  });

  it('names the file and each bad field', () => {
    const text = file([
      { name: 'ok', sha256: hex('x'), role: 'reader', datasets: ['a'] },
      { name: 'bad', sha256: hex('y'), role: 'owner', datasets: [] },
    ]);
    expect(() => parseTokensFile(text, FILE)).toThrow(
      /invalid tokens file \/etc\/loader\/tokens\.json\n {2}tokens\[1\]\.role: must be one of reader, writer, admin\n {2}tokens\[1\]\.datasets: must name at least one dataset/,
    );
    expect(() => parseTokensFile('{"tokens": [], "slt_x": 1}', FILE)).toThrow(
      /\(file\): has fields it should not; the file is \{"tokens": \[\.\.\.\]\}$/,
    );
    expect(() => parseTokensFile('[]', FILE)).toThrow(/\(file\): must be an object/);
    expect(() =>
      parseTokensFile(
        file([{ name: 'a', sha256: hex('x'), role: 'reader', datasets: ['x'], slt_y: 1 }]),
        FILE,
      ),
    ).toThrow(
      /tokens\[0\]: has fields it should not; an entry has name, sha256, role and datasets$/,
    );
    expect(() =>
      parseTokensFile(file([{ name: 'a', sha256: hex('x'), role: 'reader' }]), FILE),
    ).toThrow(/tokens\[0\]\.datasets/);
  });

  it('never quotes a token written where its hash belongs, nor text that is not JSON', () => {
    const token = 'slt_SECRETSECRETSECRETSECRETSECRETSECRET';
    const cases = [
      file([{ name: 'a', sha256: token, role: 'reader', datasets: ['x'] }]),
      `{"tokens": [${token}]}`,
      `${token}\n`,
    ];
    for (const text of cases) {
      let message = '';
      try {
        parseTokensFile(text, FILE);
      } catch (err) {
        message = (err as Error).message;
        expect((err as Error).cause).toBeUndefined();
      }
      expect(message).toContain(FILE);
      expect(message).not.toContain('SECRET');
    }
  });

  it('refuses two entries with the same name or the same hash', () => {
    const dupName = file([
      { name: 'a', sha256: hex('1'), role: 'reader', datasets: ['x'] },
      { name: 'a', sha256: hex('2'), role: 'reader', datasets: ['x'] },
    ]);
    expect(() => parseTokensFile(dupName, FILE)).toThrow(/tokens\[1\]\.name "a" is used twice/);
    const dupHash = file([
      { name: 'a', sha256: hex('1'), role: 'reader', datasets: ['x'] },
      { name: 'b', sha256: hex('1'), role: 'admin', datasets: ['*'] },
    ]);
    expect(() => parseTokensFile(dupHash, FILE)).toThrow(/same sha256 as an earlier entry/);
  });
});

describe('findToken', () => {
  const grants = [
    grant('a', 'reader', ['x']),
    grant('b', 'admin', ['*']),
    grant('c', 'reader', ['y']),
  ];

  it('finds the entry of a known token and nothing for an unknown one', () => {
    expect(findToken(grants, 'slt_b')?.name).toBe('b');
    expect(findToken(grants, 'slt_c')?.name).toBe('c');
    expect(findToken(grants, 'slt_d')).toBeUndefined();
    expect(findToken(grants, '')).toBeUndefined();
    expect(findToken([], 'slt_a')).toBeUndefined();
  });

  it('compares with every entry, even after a match (no early exit)', () => {
    for (const token of ['slt_a', 'slt_c', 'nope']) {
      let compared = 0;
      const counted = grants.map((g) => ({
        ...g,
        get digest() {
          compared += 1;
          return g.digest;
        },
      }));
      findToken(counted, token);
      expect(compared).toBe(grants.length);
    }
  });

  it('takes as long for a token that shares a long prefix with a valid one as for any other', () => {
    // Hashing first means no comparison sees the token's characters: a guess right up to its
    // last character has a hash as different as a random guess. The digests compared are
    // always 32 bytes, so timingSafeEqual never throws on a length mismatch.
    const near = 'slt_' + 'a'.repeat(40);
    const g = [{ ...grant('n', 'reader', ['x']), digest: hashToken(near) }];
    expect(findToken(g, near.slice(0, -1) + 'b')).toBeUndefined();
    expect(findToken(g, 'x'.repeat(10_000))).toBeUndefined();
    expect(findToken(g, near)?.name).toBe('n');
  });
});

describe('checkGrant', () => {
  const rpcs = Object.keys(RPC_ROLES) as LoaderRpc[];

  it('lets a reader stream, describe, list and get splits, but not ingest or create them', () => {
    const reader = grant('trainer', 'reader', ['mnist']);
    for (const rpc of rpcs.filter((r) => r !== 'CreateSplits' && r !== 'IngestSamples')) {
      expect(checkGrant(reader, rpc, 'mnist')).toBeUndefined();
    }
    expect(checkGrant(reader, 'CreateSplits', 'mnist')).toBe(
      'token "trainer" has role reader, and CreateSplits needs role admin; ask for a token with that role',
    );
    expect(checkGrant(reader, 'IngestSamples', 'mnist')).toBe(
      'token "trainer" has role reader, and IngestSamples needs role writer; ask for a token with that role',
    );
  });

  it('lets a writer do what a reader does and ingest, but not create split sets', () => {
    const writer = grant('etl', 'writer', ['mnist']);
    for (const rpc of rpcs.filter((r) => r !== 'CreateSplits')) {
      expect(checkGrant(writer, rpc, 'mnist')).toBeUndefined();
    }
    expect(checkGrant(writer, 'CreateSplits', 'mnist')).toBe(
      'token "etl" has role writer, and CreateSplits needs role admin; ask for a token with that role',
    );
    expect(checkGrant(writer, 'IngestSamples', 'cifar')).toBe(
      'token "etl" may not use dataset "cifar" (IngestSamples); its grant covers mnist',
    );
  });

  it('checkRole decides by the role alone, for calls whose dataset comes later', () => {
    expect(checkRole(grant('a', 'writer', ['x']), 'IngestSamples')).toBeUndefined();
    expect(checkRole(grant('a', 'admin', ['x']), 'IngestSamples')).toBeUndefined();
    expect(checkRole(grant('a', 'reader', ['*']), 'IngestSamples')).toMatch(
      /has role reader, and IngestSamples needs role writer/,
    );
  });

  it('lets an admin make every call', () => {
    const admin = grant('ops', 'admin', ['mnist']);
    for (const rpc of rpcs) expect(checkGrant(admin, rpc, 'mnist')).toBeUndefined();
  });

  it('limits every role to its datasets; * grants all', () => {
    const reader = grant('trainer', 'reader', ['mnist', 'cifar']);
    expect(checkGrant(reader, 'GetSplit', 'cifar')).toBeUndefined();
    expect(checkGrant(reader, 'StreamBatches', 'pathology')).toBe(
      'token "trainer" may not use dataset "pathology" (StreamBatches); its grant covers mnist, cifar',
    );
    const admin = grant('ops', 'admin', ['mnist']);
    expect(checkGrant(admin, 'CreateSplits', 'cifar')).toMatch(/may not use dataset "cifar"/);
    const all = grant('any', 'reader', ['*']);
    expect(checkGrant(all, 'DescribeDataset', 'whatever')).toBeUndefined();
  });
});

describe('bearerToken', () => {
  const md = (...values: string[]): grpc.Metadata => {
    const m = new grpc.Metadata();
    for (const v of values) m.add('authorization', v);
    return m;
  };

  it('reads "Bearer <token>" and tells a missing header from another scheme', () => {
    expect(bearerToken(md('Bearer slt_abc'))).toEqual({ kind: 'token', token: 'slt_abc' });
    expect(bearerToken(md('bearer  slt_abc '))).toEqual({ kind: 'token', token: 'slt_abc' });
    expect(bearerToken(md())).toEqual({ kind: 'missing' });
    expect(bearerToken(md('Basic dXNlcjpwYXNz'))).toEqual({ kind: 'malformed' });
    expect(bearerToken(md('Bearer '))).toEqual({ kind: 'malformed' });
    expect(bearerToken(md('Bearer first', 'Bearer second'))).toEqual({
      kind: 'token',
      token: 'first',
    });
  });
});

describe('newTokenEntry', () => {
  it('makes a slt_ token of 32 random bytes and an entry holding only its hash', () => {
    const { token, entry } = newTokenEntry({
      name: 'trainer-a',
      role: 'reader',
      datasets: ['mnist'],
    });
    expect(token).toMatch(/^slt_[A-Za-z0-9_-]{43}$/);
    expect(entry).toEqual({
      name: 'trainer-a',
      role: 'reader',
      datasets: ['mnist'],
      sha256: hex(token),
    });
    expect(JSON.stringify(entry)).not.toContain(token.slice(4));
    const grants = parseTokensFile(file([entry]), FILE);
    expect(findToken(grants, token)?.name).toBe('trainer-a');
    expect(newTokenEntry({ name: 'x', role: 'admin', datasets: ['*'] }).token).not.toBe(token);
    expect(newTokenEntry({ name: 'w', role: 'writer', datasets: ['mnist'] }).entry.role).toBe(
      'writer',
    );
  });

  it('refuses a grant the tokens file would refuse', () => {
    expect(() => newTokenEntry({ name: '', role: 'reader', datasets: [] })).toThrow(
      /invalid token grant\n {2}--name: .*\n {2}--datasets: must name at least one dataset/,
    );
  });
});
