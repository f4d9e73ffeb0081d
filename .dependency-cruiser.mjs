// @ts-check
// The layers of docs/architecture.md, checked by `npm run lint` (`npm run lint:layers`).
// Paths are relative to the repository root. Type-only imports count: a layer that names
// another layer's types depends on it. test/unit/layerRules.test.ts runs these rules on a
// fixture of wrong imports, so a rule that stops matching fails a test.

/** The entry files a layer offers the rest of the repository. */
const ENTRY = '^src/[^/]+/index\\.ts$|^src/datasets/photos/index\\.ts$|^src/core/requests\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'core-no-grpc',
      comment: 'src/core is the library: no gRPC. The server speaks gRPC and maps errors.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '(^|/)node_modules/@grpc/' },
    },
    {
      name: 'core-not-above',
      comment:
        'src/core imports no layer above it (server, cli, client), no dev-only code (devdb), ' +
        'no generated wire types, no sample datasets.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/(server|cli|client|devdb|generated|proto|datasets)/' },
    },
    {
      name: 'core-cache-not-fetch',
      comment:
        'The sample cache sits below the fetch engine: the engine consults it, never the reverse (warming a cache belongs above the engine).',
      severity: 'error',
      from: { path: '^src/core/cache/' },
      to: { path: '^src/core/fetch/' },
    },
    {
      name: 'core-through-entries',
      comment:
        'The rest of src uses the core through its entries: src/core/index.ts, and ' +
        'src/core/requests.ts (the validators without the database driver or sharp).',
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: ['^src/core/', '^src/cli/sizeThreadPool[.]ts$', '^src/testing/'],
      },
      to: { path: '^src/core/', pathNot: ENTRY },
    },
    {
      name: 'testing-not-in-product',
      comment:
        'src/testing/index.ts re-exports internals for the tests and benchmarks only; the build ' +
        'leaves it out, so nothing else in src may import it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/testing/' },
      to: { path: '^src/testing/' },
    },
    {
      name: 'core-through-entries-thread-pool',
      comment:
        "The one exception: the CLI's first import sizes libuv's thread pool before anything " +
        "loads (sharp, the driver), so it reads the core's CPU-quota module alone, not the index.",
      severity: 'error',
      from: { path: '^src/cli/sizeThreadPool[.]ts$' },
      to: { path: '^src/core/', pathNot: [ENTRY, '^src/core/transform/cpuQuota[.]ts$'] },
    },
    {
      name: 'datasets-not-above',
      comment:
        'Sample datasets use the core only: no dev-only code (src/devdb) and no cli, server or client.',
      severity: 'error',
      from: { path: '^src/datasets/' },
      to: { path: '^src/(devdb|cli|server|client)/' },
    },
    {
      name: 'client-only-wire-and-requests',
      comment:
        'The TypeScript SDK takes from the rest of src only the wire (generated types, the proto ' +
        "loader and the checkpoint codec) and the core's request validators (src/core/requests.ts).",
      severity: 'error',
      from: { path: '^src/client/' },
      to: {
        path: '^src/',
        pathNot: [
          '^src/client/',
          '^src/core/requests\\.ts$',
          '^src/generated/',
          '^src/proto/(loadLoaderProto|jobCheckpointCodec)\\.ts$',
        ],
      },
    },
    {
      name: 'client-package-dependencies',
      comment:
        '@scylla-loader/client (clients/typescript/package.json) depends on gRPC, protobufjs ' +
        'and zod only: nothing the SDK reaches may load another package (the database driver, sharp...).',
      severity: 'error',
      from: { path: '^src/client/index\\.ts$' },
      to: {
        reachable: true,
        path: '(^|/)node_modules/',
        pathNot: '(^|/)node_modules/(@grpc/grpc-js|@grpc/proto-loader|protobufjs|zod)/',
      },
    },
    {
      name: 'server-not-above',
      comment: 'src/server is below the CLI and ships without the benchmarks and the tests.',
      severity: 'error',
      from: { path: '^src/server/' },
      to: { path: '^(src/cli/|bench/|test/)' },
    },
    {
      name: 'src-no-bench-or-test',
      comment: 'The shipped tree (dist/src) holds no benchmark and no test.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(bench|test)/' },
    },
    {
      name: 'dev-only-through-devOnly',
      comment:
        'The runtime image leaves src/devdb and src/datasets/photos out: only src/cli/devOnly.ts ' +
        'loads them (when a command needs them); type-only imports are erased and allowed.',
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: '^src/(devdb|datasets/photos|testing)/|^src/cli/devOnly\\.ts$',
      },
      to: { path: '^src/(devdb|datasets/photos)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'bench-through-entries',
      comment:
        'The benchmarks use the product as a user of its packages would: through the entry ' +
        'files src/<layer>/index.ts (and src/core/requests.ts), and the test harness through test/<folder>/index.ts.',
      severity: 'error',
      from: { path: '^bench/' },
      to: {
        path: '^(src|test)/',
        pathNot: [ENTRY, '^test/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'tests-not-bench',
      comment:
        'The tests and the fault harness sit below the benchmarks: what both use lives in ' +
        'test/support or test/faults, and the benchmarks import it through their entries.',
      severity: 'error',
      from: { path: '^test/' },
      to: { path: '^bench/' },
    },
    {
      name: 'tests-through-entries',
      comment:
        'Integration tests, their support code and the fault harness use the product through ' +
        'its entry files; unit tests (test/unit) may test any module directly.',
      severity: 'error',
      from: { path: '^test/', pathNot: '^test/(unit|fixtures)/' },
      to: { path: '^src/', pathNot: ENTRY },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|native|clients)/|^test/fixtures/' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
