import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { serveCommand, serveConfigFromFlags } from '../../src/testing/index.js';
import { SERVE_SETTINGS } from '../../src/testing/index.js';
import { toolPath, toolsDir } from '../support/toolPath.js';

/**
 * deploy/k8s, checked offline: every kustomization renders, and kubeconform validates the output
 * strictly against local JSON schemas (scripts/tools/k8s-schemas.sh): the Kubernetes API schemas
 * of the PyPI package kubernetes-validate, and the CRD schemas of the Prometheus Operator
 * (ServiceMonitor, PodMonitor) and the Scylla Operator (ScyllaCluster), plus cert-manager's
 * Certificate from deploy/k8s/schemas (vendored: see generate.sh there). Nothing is skipped, and
 * kubeconform runs with an unreachable proxy, so a schema it would fetch from the network fails
 * the test instead of being fetched.
 */

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const k8sDir = path.join(repo, 'deploy', 'k8s');
/** The Kubernetes version validated against (native sidecars are GA from 1.33). */
const KUBERNETES_VERSION = '1.33.0';
const schemasDir = path.join(toolsDir(), 'k8s-schemas');
/** CRD schemas kept in the repository (cert-manager's Certificate), same layout as `crds`. */
const vendoredSchemasDir = path.join(k8sDir, 'schemas');

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

interface KubeconformResource {
  filename: string;
  kind: string;
  name: string;
  version: string;
  status: 'statusValid' | 'statusInvalid' | 'statusError' | 'statusSkipped' | 'statusEmpty';
  msg: string;
}

interface KubeconformResult {
  exitCode: number | null;
  resources: KubeconformResource[];
  summary: { valid: number; invalid: number; errors: number; skipped: number };
}

function run(command: string, args: string[], input?: string): string {
  const result = spawnSync(command, args, {
    input,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    cwd: repo,
  });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}:\n${result.stderr}`);
  }
  return result.stdout;
}

/** `kustomize build` when scripts/tools/kustomize.sh installed it, otherwise `kubectl kustomize`. */
function kustomizeCommand(): [string, string[]] {
  const standalone = path.join(toolsDir(), 'bin', 'kustomize');
  if (existsSync(standalone)) return [standalone, ['build']];
  try {
    return [toolPath('kubectl'), ['kustomize']];
  } catch {
    throw new Error(
      'neither kustomize nor kubectl is installed; run scripts/setup.sh ' +
        `(scripts/tools/kustomize.sh installs kustomize into ${toolsDir()}/bin)`,
    );
  }
}

function render(dir: string): string {
  const [command, args] = kustomizeCommand();
  return run(command, [...args, path.join(k8sDir, dir)]);
}

/** Multi-document YAML as objects, parsed by the PyYAML that k8s-schemas.sh installed. */
function parseYaml(text: string): K8sObject[] {
  const script =
    'import json, sys, yaml\n' +
    'print(json.dumps([d for d in yaml.safe_load_all(sys.stdin) if d is not None]))';
  const out = spawnSync('python3', ['-c', script], {
    input: text,
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: path.join(toolsDir(), 'py') },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (out.status !== 0) throw new Error(`parsing YAML failed: ${out.stderr}`);
  return JSON.parse(out.stdout) as K8sObject[];
}

/** The one kubeconform invocation every check uses: strict, local schemas only, JSON output. */
function kubeconform(manifests: string): KubeconformResult {
  const args = [
    '-strict',
    '-summary',
    '-output',
    'json',
    '-verbose',
    '-kubernetes-version',
    KUBERNETES_VERSION,
    '-schema-location',
    path.join(
      schemasDir,
      'kubernetes',
      '{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}',
      '{{ .ResourceKind }}{{ .KindSuffix }}.json',
    ),
    '-schema-location',
    path.join(
      schemasDir,
      'crds',
      '{{ .Group }}',
      '{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json',
    ),
    '-schema-location',
    path.join(
      vendoredSchemasDir,
      '{{ .Group }}',
      '{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json',
    ),
    '-',
  ];
  const noNetwork = 'http://127.0.0.1:9';
  const result = spawnSync(toolPath('kubeconform'), args, {
    input: manifests,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: {
      ...process.env,
      HTTP_PROXY: noNetwork,
      HTTPS_PROXY: noNetwork,
      http_proxy: noNetwork,
      https_proxy: noNetwork,
      NO_PROXY: '',
      no_proxy: '',
    },
  });
  if (result.error) throw result.error;
  let parsed: Omit<KubeconformResult, 'exitCode'>;
  try {
    parsed = JSON.parse(result.stdout) as Omit<KubeconformResult, 'exitCode'>;
  } catch {
    throw new Error(
      `kubeconform printed no JSON (exit ${result.status}):\n${result.stdout}\n${result.stderr}`,
    );
  }
  return { exitCode: result.status, resources: parsed.resources ?? [], summary: parsed.summary };
}

function expectAllValid(result: KubeconformResult, objects: K8sObject[]): void {
  const notValid = result.resources.filter((r) => r.status !== 'statusValid');
  expect(notValid, JSON.stringify(notValid, null, 2)).toEqual([]);
  expect(result.summary).toEqual({ valid: objects.length, invalid: 0, errors: 0, skipped: 0 });
  expect(result.exitCode).toBe(0);
  expect(
    result.resources.map((r) => `${r.kind}/${r.name}`).sort(),
    'kubeconform validated every rendered object',
  ).toEqual(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort());
}

function find(objects: K8sObject[], kind: string, name?: string): K8sObject {
  const found = objects.find(
    (o) => o.kind === kind && (name === undefined || o.metadata.name === name),
  );
  if (!found)
    throw new Error(
      `no ${kind}${name ? ` ${name}` : ''} among ${objects.map((o) => o.kind).join(', ')}`,
    );
  return found;
}

// Loose views of the rendered objects for the assertions below.
interface Probe {
  grpc?: { port: number };
  httpGet?: { path: string; port: number | string };
  exec?: { command: string[] };
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  restartPolicy?: string;
  ports?: { name?: string; containerPort: number }[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
  }[];
  envFrom?: { configMapRef?: { name: string } }[];
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[] };
    seccompProfile?: { type: string };
  };
  volumeMounts?: { name: string; mountPath: string; subPath?: string; readOnly?: boolean }[];
}
interface Volume {
  name: string;
  emptyDir?: object;
  secret?: { secretName: string; optional?: boolean };
  projected?: { sources: { secret?: { name: string; items?: { key: string; path: string }[] } }[] };
}
interface PodTemplate {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    terminationGracePeriodSeconds?: number;
    securityContext?: {
      runAsNonRoot?: boolean;
      runAsUser?: number;
      seccompProfile?: { type: string };
    };
    initContainers?: Container[];
    containers: Container[];
    volumes?: Volume[];
  };
}
const podTemplate = (o: K8sObject): PodTemplate => (o.spec as { template: PodTemplate }).template;
const configData = (objects: K8sObject[]): Record<string, string> =>
  find(objects, 'ConfigMap', 'scylla-loader-config').data as Record<string, string>;

/**
 * The Secret (and key) behind the file a container's environment variable names: the
 * variable's path must lie in a volume mount, mounted whole (a subPath mount never sees a
 * Secret's updates, so rotation would not reach the loader), read-only, of a Secret volume.
 */
function secretFileOf(
  pod: PodTemplate,
  container: Container,
  envName: string,
): { secretName: string; key: string; optional: boolean } {
  const value = container.env?.find((e) => e.name === envName)?.value;
  if (value === undefined) throw new Error(`${container.name} has no ${envName}`);
  const mount = container.volumeMounts?.find((m) => value.startsWith(`${m.mountPath}/`));
  if (!mount) throw new Error(`${envName}=${value} is in no volume mount of ${container.name}`);
  expect(mount.subPath, `${envName}: mounted whole`).toBeUndefined();
  expect(mount.readOnly, `${envName}: read-only`).toBe(true);
  const volume = pod.spec.volumes?.find((v) => v.name === mount.name);
  const key = value.slice(mount.mountPath.length + 1);
  if (volume?.secret) {
    const { secretName, optional } = volume.secret;
    return { secretName, key, optional: optional ?? false };
  }
  const source = volume?.projected?.sources.find((s) =>
    s.secret?.items?.some((i) => i.path === key),
  );
  if (!source?.secret)
    throw new Error(`${envName}: volume ${mount.name} holds no Secret key ${key}`);
  const item = source.secret.items!.find((i) => i.path === key)!;
  return { secretName: source.secret.name, key: item.key, optional: false };
}

/** The loader's TLS and tokens files come from the required Secrets, in every form it runs in. */
function expectTlsAndTokens(pod: PodTemplate, loader: Container): void {
  expect(secretFileOf(pod, loader, 'SCYLLA_LOADER_TLS_CERT')).toEqual({
    secretName: 'scylla-loader-tls',
    key: 'tls.crt',
    optional: false,
  });
  expect(secretFileOf(pod, loader, 'SCYLLA_LOADER_TLS_KEY')).toEqual({
    secretName: 'scylla-loader-tls',
    key: 'tls.key',
    optional: false,
  });
  expect(secretFileOf(pod, loader, 'SCYLLA_LOADER_AUTH_TOKENS_FILE')).toEqual({
    secretName: 'scylla-loader-tokens',
    key: 'tokens.json',
    optional: false,
  });
  // The database's files: an optional Secret, in the folder the ConfigMap's comments name.
  const db = loader.volumeMounts?.find((m) => m.mountPath === '/etc/scylla-loader/db');
  expect(pod.spec.volumes?.find((v) => v.name === db?.name)?.secret).toMatchObject({
    secretName: 'scylla-loader-db',
    optional: true,
  });
  // No password in the environment: it comes from a file (SCYLLA_LOADER_DB_PASSWORD_FILE).
  expect(loader.env?.map((e) => e.name)).not.toContain('SCYLLA_LOADER_DB_PASSWORD');
}

/** Every kustomization under deploy/k8s, by folder. */
const KUSTOMIZATIONS = [
  'base',
  'overlays/sidecar',
  'overlays/scylla',
  'overlays/scylla/statefulset',
  'overlays/monitoring',
  'overlays/cert-manager',
];

const BASE_KINDS = [
  'ConfigMap',
  'Deployment',
  'HorizontalPodAutoscaler',
  'NetworkPolicy',
  'PodDisruptionBudget',
  'Service',
];

/** Kinds each kustomization must render, exactly. */
const EXPECTED_KINDS: Record<string, string[]> = {
  base: BASE_KINDS,
  'overlays/sidecar': ['ConfigMap', 'Job'],
  'overlays/scylla': [...BASE_KINDS, 'ScyllaCluster'],
  'overlays/scylla/statefulset': [...BASE_KINDS, 'Service', 'StatefulSet'],
  'overlays/monitoring': [...BASE_KINDS, 'PodMonitor', 'ServiceMonitor'],
  'overlays/cert-manager': [...BASE_KINDS, 'Certificate'],
};

describe('deploy/k8s (kustomize + kubeconform, offline)', () => {
  const rendered = new Map<string, { yaml: string; objects: K8sObject[] }>();

  beforeAll(() => {
    for (const file of [
      `kubernetes/v${KUBERNETES_VERSION}-standalone-strict/deployment-apps-v1.json`,
      'crds/monitoring.coreos.com/servicemonitor_v1.json',
      'crds/monitoring.coreos.com/podmonitor_v1.json',
      'crds/scylla.scylladb.com/scyllacluster_v1.json',
    ]) {
      if (!existsSync(path.join(schemasDir, file))) {
        throw new Error(
          `schema ${file} is missing in ${schemasDir}; run scripts/setup.sh (scripts/tools/k8s-schemas.sh)`,
        );
      }
    }
    expect(
      existsSync(path.join(vendoredSchemasDir, 'cert-manager.io', 'certificate_v1.json')),
    ).toBe(true);
    for (const dir of KUSTOMIZATIONS) {
      const yaml = render(dir);
      rendered.set(dir, { yaml, objects: parseYaml(yaml) });
    }
  });

  const get = (dir: string): K8sObject[] => rendered.get(dir)!.objects;

  /**
   * The disk tier's folder is an emptyDir volume mounted where SCYLLA_LOADER_CACHE_DIR says,
   * whose sizeLimit is above the tier's bound (a full emptyDir evicts the pod).
   */
  function expectCacheVolume(pod: PodTemplate, loader: Container, volume: string, bound: number) {
    const dir = loader.env?.find((e) => e.name === 'SCYLLA_LOADER_CACHE_DIR')?.value;
    expect(dir, 'SCYLLA_LOADER_CACHE_DIR').toBeDefined();
    expect(loader.volumeMounts).toContainEqual({ name: volume, mountPath: dir });
    const spec = pod.spec.volumes?.find((v) => v.name === volume) as
      { emptyDir?: { sizeLimit?: string } } | undefined;
    const limit = spec?.emptyDir?.sizeLimit ?? '';
    const [, amount, unit] = /^(\d+)(Mi|Gi)$/.exec(limit) ?? [];
    expect(amount, `sizeLimit of ${volume}`).toBeDefined();
    const limitBytes = Number(amount) * (unit === 'Gi' ? 1024 ** 3 : 1024 ** 2);
    expect(bound).toBeGreaterThanOrEqual(16 * 1024 ** 2);
    expect(limitBytes).toBeGreaterThan(bound * 1.05);
  }

  it('covers every kustomization in deploy/k8s', () => {
    const found = run('find', [k8sDir, '-name', 'kustomization.yaml'])
      .trim()
      .split('\n')
      .map((f) => path.relative(k8sDir, path.dirname(f)))
      // base/config is a piece of the base (the sidecar overlay takes it alone), checked with both.
      .filter((d) => d !== 'base/config')
      .sort();
    expect(found).toEqual([...KUSTOMIZATIONS].sort());
  });

  it.each(KUSTOMIZATIONS)("%s: the ConfigMap sets only serve's settings, valid ones", (dir) => {
    const maps = get(dir).filter(
      (o) => o.kind === 'ConfigMap' && o.metadata.name === 'scylla-loader-config',
    );
    for (const map of maps) {
      const data = map.data as Record<string, string>;
      const declared = new Set(SERVE_SETTINGS.map((s) => s.env));
      expect(Object.keys(data).filter((k) => !declared.has(k))).toEqual([]);
      // The values as `serve` reads them from the environment: the schema accepts them all.
      const cmd = serveCommand().exitOverride();
      const saved = { ...process.env };
      try {
        for (const key of Object.keys(process.env)) {
          if (key.startsWith('SCYLLA_LOADER_')) delete process.env[key];
        }
        Object.assign(process.env, data);
        cmd.parse([], { from: 'user' });
        const config = serveConfigFromFlags(cmd.opts(), process.env);
        expect(config.port).toBe(Number(data.SCYLLA_LOADER_GRPC_PORT ?? config.port));
      } finally {
        process.env = saved;
      }
    }
  });

  it.each(KUSTOMIZATIONS)('%s renders and every object is valid', (dir) => {
    const { yaml, objects } = rendered.get(dir)!;
    expect(objects.map((o) => o.kind).sort()).toEqual([...EXPECTED_KINDS[dir]!].sort());
    // ScyllaCluster is validated against the scylla-operator CRD schema like any other kind:
    // nothing is skipped (expectAllValid requires skipped: 0).
    expectAllValid(kubeconform(yaml), objects);
  });

  it('the example Secrets are valid and not part of any kustomization', () => {
    const text = readFileSync(path.join(k8sDir, 'base', 'secret.example.yaml'), 'utf8');
    const objects = parseYaml(text);
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Secret/scylla-loader-secrets',
      'Secret/scylla-loader-tls',
      'Secret/scylla-loader-tokens',
      'Secret/scylla-loader-db',
    ]);
    // Every key the manifests read from them is in the examples.
    const keys = Object.fromEntries(
      objects.map((o) => [o.metadata.name, Object.keys(o.stringData as object).sort()]),
    );
    expect(keys).toEqual({
      'scylla-loader-secrets': ['SCYLLA_LOADER_RESUME_KEY'],
      'scylla-loader-tls': ['tls.crt', 'tls.key'],
      'scylla-loader-tokens': ['tokens.json'],
      'scylla-loader-db': ['ca.crt', 'password', 'username'],
    });
    expectAllValid(kubeconform(text), objects);
    for (const dir of KUSTOMIZATIONS) {
      expect(get(dir).filter((o) => o.kind === 'Secret')).toEqual([]);
    }
  });

  it('base: a hardened Deployment with HTTP health probes, reading config and the Secrets', () => {
    const objects = get('base');
    const deployment = find(objects, 'Deployment', 'scylla-loader');
    expect((deployment.spec as { replicas: number }).replicas).toBe(2);
    const pod = podTemplate(deployment);
    expect(pod.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    const [loader] = pod.spec.containers;
    expect(loader!.image).toBe('scylla-loader:0.1.0');
    expect(loader!.args).toEqual(['serve']);
    expect(loader!.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    // The kubelet's gRPC probe cannot speak TLS: /healthz on the plain-HTTP metrics port.
    for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe'] as const) {
      expect(loader![probe], probe).toMatchObject({
        httpGet: { path: '/healthz', port: 'metrics' },
      });
      expect(loader![probe]!.grpc, probe).toBeUndefined();
    }
    expectTlsAndTokens(pod, loader!);
    expect(loader!.ports).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'grpc', containerPort: 50051 }),
        expect.objectContaining({ name: 'metrics', containerPort: 9464 }),
      ]),
    );
    expect(loader!.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    expect(pod.spec.volumes).toContainEqual(
      expect.objectContaining({ name: 'tmp', emptyDir: expect.anything() }),
    );
    expectCacheVolume(
      pod,
      loader!,
      'cache',
      Number(configData(objects).SCYLLA_LOADER_CACHE_DISK_BYTES),
    );
    const graceMs = Number(configData(objects).SCYLLA_LOADER_SHUTDOWN_GRACE_MS);
    expect(graceMs).toBe(15000);
    expect(pod.spec.terminationGracePeriodSeconds! * 1000).toBeGreaterThan(graceMs);
    expect(pod.metadata.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '9464',
    });
    expect(loader!.envFrom).toContainEqual({ configMapRef: { name: 'scylla-loader-config' } });
    const secretEnv = Object.fromEntries(
      (loader!.env ?? [])
        .filter((e) => e.valueFrom?.secretKeyRef)
        .map((e) => [e.name, e.valueFrom!.secretKeyRef!.name]),
    );
    expect(secretEnv).toEqual({
      SCYLLA_LOADER_DB_USERNAME: 'scylla-loader-db',
      SCYLLA_LOADER_RESUME_KEY: 'scylla-loader-secrets',
    });

    const service = find(objects, 'Service', 'scylla-loader').spec as {
      ports: { name: string; port: number }[];
    };
    expect(service.ports.map((p) => [p.name, p.port])).toEqual([
      ['grpc', 50051],
      ['metrics', 9464],
    ]);
    const hpa = find(objects, 'HorizontalPodAutoscaler').spec as {
      scaleTargetRef: { kind: string; name: string };
      metrics: { resource?: { name: string } }[];
    };
    expect(hpa.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'scylla-loader' });
    expect(hpa.metrics.map((m) => m.resource?.name)).toEqual(['cpu']);
    const netpol = JSON.stringify(find(objects, 'NetworkPolicy').spec);
    for (const needle of [
      '"scylla-loader/client":"true"',
      '"port":50051',
      '"port":9464',
      '"monitoring"',
      '"port":9042',
      '"port":9142',
      '"port":53',
    ]) {
      expect(netpol).toContain(needle);
    }
  });

  it('sidecar: a trainer Job with the loader as a native sidecar on localhost', () => {
    const objects = get('overlays/sidecar');
    expect(objects.filter((o) => o.kind === 'Deployment')).toEqual([]);
    const pod = podTemplate(find(objects, 'Job'));
    const loader = pod.spec.initContainers?.find((c) => c.image === 'scylla-loader:0.1.0');
    expect(loader, 'loader init container').toBeDefined();
    expect(loader!.restartPolicy).toBe('Always');
    // Listening on 127.0.0.1 only, the loader is probed from inside its container.
    expect(loader!.env).toContainEqual({ name: 'SCYLLA_LOADER_HOST', value: '127.0.0.1' });
    // The PodMonitor dials the pod address: metrics must not follow gRPC onto 127.0.0.1.
    expect(loader!.env).toContainEqual({ name: 'SCYLLA_LOADER_METRICS_HOST', value: '0.0.0.0' });
    for (const probe of ['startupProbe', 'livenessProbe'] as const) {
      expect(loader![probe]!.exec!.command.join(' '), probe).toContain(
        'http://127.0.0.1:9464/healthz',
      );
    }
    expectTlsAndTokens(pod, loader!);
    expect(loader!.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
    });
    expect(loader!.envFrom).toContainEqual({ configMapRef: { name: 'scylla-loader-config' } });
    const diskBytes = loader!.env!.find((e) => e.name === 'SCYLLA_LOADER_CACHE_DISK_BYTES');
    expectCacheVolume(pod, loader!, 'loader-cache', Number(diskBytes?.value));
    const trainer = pod.spec.containers.find((c) => c.name === 'trainer');
    expect(trainer?.env).toContainEqual({
      name: 'SCYLLA_LOADER_ADDRESS',
      value: 'localhost:50051',
    });
    // The trainer verifies the loader with the CA of its certificate and sends its own token.
    expect(secretFileOf(pod, trainer!, 'SCYLLA_LOADER_TLS_CA')).toMatchObject({
      secretName: 'scylla-loader-tls',
      key: 'ca.crt',
    });
    expect(secretFileOf(pod, trainer!, 'SCYLLA_LOADER_TOKEN_FILE')).toMatchObject({
      secretName: 'scylla-loader-trainer-token',
      key: 'token',
    });
  });

  it('scylla: a ScyllaCluster, with the loader pointed at its client Service and datacenter', () => {
    const objects = get('overlays/scylla');
    const cluster = find(objects, 'ScyllaCluster');
    expect(cluster.apiVersion).toBe('scylla.scylladb.com/v1');
    const spec = cluster.spec as { datacenter: { name: string; racks: { members: number }[] } };
    const data = configData(objects);
    // The Scylla Operator names the cluster's client Service <cluster>-client.
    expect(data.SCYLLA_LOADER_CONTACT_POINTS).toBe(`${cluster.metadata.name}-client`);
    expect(data.SCYLLA_LOADER_LOCAL_DC).toBe(spec.datacenter.name);
    expect(spec.datacenter.racks[0]!.members).toBeGreaterThanOrEqual(3);
  });

  it('scylla/statefulset: a plain StatefulSet behind a headless Service the loader points at', () => {
    const objects = get('overlays/scylla/statefulset');
    const statefulSet = find(objects, 'StatefulSet', 'scylla');
    const serviceName = (statefulSet.spec as { serviceName: string }).serviceName;
    const headless = find(objects, 'Service', serviceName).spec as {
      clusterIP: string;
      ports: { port: number }[];
    };
    expect(headless.clusterIP).toBe('None');
    expect(headless.ports.map((p) => p.port).sort()).toEqual(
      [7000, 7001, 9042, 9180, 10000].sort(),
    );
    const [scylla] = podTemplate(statefulSet).spec.containers;
    expect(scylla!.image).toMatch(/^scylladb\/scylla(:|$)/);
    expect(scylla!.args).toContain(`--seeds=${statefulSet.metadata.name}-0.${serviceName}`);
    expect(scylla!.volumeMounts).toContainEqual({ name: 'data', mountPath: '/var/lib/scylla' });
    expect(configData(objects).SCYLLA_LOADER_CONTACT_POINTS).toBe(serviceName);
  });

  it('monitoring: ServiceMonitor and PodMonitor scrape the loaders metrics port', () => {
    const objects = get('overlays/monitoring');
    const serviceMonitor = find(objects, 'ServiceMonitor').spec as {
      selector: { matchLabels: Record<string, string> };
      endpoints: { port: string }[];
    };
    const service = find(objects, 'Service', 'scylla-loader');
    expect(service.metadata.labels).toMatchObject(serviceMonitor.selector.matchLabels);
    expect(serviceMonitor.endpoints.map((e) => e.port)).toEqual(['metrics']);
    const podMonitor = find(objects, 'PodMonitor').spec as {
      selector: { matchLabels: Record<string, string> };
      podMetricsEndpoints: { port: string }[];
    };
    // The PodMonitor targets the sidecar overlay's trainer pods.
    const trainerPod = podTemplate(find(get('overlays/sidecar'), 'Job'));
    expect(trainerPod.metadata.labels).toMatchObject(podMonitor.selector.matchLabels);
    const loader = trainerPod.spec.initContainers!.find((c) => c.restartPolicy === 'Always')!;
    expect(loader.ports?.map((p) => p.name)).toContain(podMonitor.podMetricsEndpoints[0]!.port);
  });

  it('cert-manager: a Certificate for the Secret the Deployment mounts, issuer set by a patch', () => {
    const objects = get('overlays/cert-manager');
    const certificate = find(objects, 'Certificate', 'scylla-loader');
    expect(certificate.apiVersion).toBe('cert-manager.io/v1');
    const spec = certificate.spec as {
      secretName: string;
      dnsNames: string[];
      usages: string[];
      issuerRef: { name: string; kind: string; group: string };
    };
    const pod = podTemplate(find(objects, 'Deployment', 'scylla-loader'));
    expect(secretFileOf(pod, pod.spec.containers[0]!, 'SCYLLA_LOADER_TLS_CERT').secretName).toBe(
      spec.secretName,
    );
    // The Service's name, which trainers of the namespace dial, and localhost for the sidecar.
    expect(spec.dnsNames).toEqual(
      expect.arrayContaining([
        find(objects, 'Service', 'scylla-loader').metadata.name,
        'localhost',
      ]),
    );
    expect(spec.usages).toContain('server auth');
    expect(spec.issuerRef).toEqual({
      name: 'scylla-loader-ca',
      kind: 'Issuer',
      group: 'cert-manager.io',
    });

    // A user's overlay over it picks another issuer and adds a name, as its comment shows.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sl-k8s-'));
    try {
      writeFileSync(
        path.join(dir, 'kustomization.yaml'),
        `resources: [${path.relative(dir, path.join(k8sDir, 'overlays', 'cert-manager'))}]
patches:
  - target: {group: cert-manager.io, kind: Certificate, name: scylla-loader}
    patch: |-
      - op: replace
        path: /spec/issuerRef
        value: {name: my-ca, kind: ClusterIssuer, group: cert-manager.io}
      - op: add
        path: /spec/dnsNames/-
        value: scylla-loader.ml.svc
`,
      );
      const [command, args] = kustomizeCommand();
      const yaml = run(command, [...args, dir]);
      const patched = parseYaml(yaml);
      expect(find(patched, 'Certificate').spec).toMatchObject({
        issuerRef: { name: 'my-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
        dnsNames: ['scylla-loader', 'localhost', 'scylla-loader.ml.svc'],
      });
      expectAllValid(kubeconform(yaml), patched);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // The same kubeconform invocation rejects broken objects, so the checks above are not no-ops:
  // a wrong type in a core kind, and unknown fields in each custom resource (strict CRD schemas).
  it.each([
    [
      'a Deployment with replicas: "two"',
      `apiVersion: apps/v1
kind: Deployment
metadata: {name: broken}
spec:
  replicas: "two"
  selector: {matchLabels: {app: broken}}
  template:
    metadata: {labels: {app: broken}}
    spec: {containers: [{name: c, image: busybox}]}
`,
    ],
    [
      'a ServiceMonitor with an unknown field',
      `apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: broken}
spec:
  selector: {matchLabels: {app: broken}}
  endpoints: [{port: metrics, scrapeEvery: 15s}]
`,
    ],
    [
      'a PodMonitor with a wrongly typed field',
      `apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata: {name: broken}
spec:
  selector: {matchLabels: {app: broken}}
  podMetricsEndpoints: [{port: 9464}]
`,
    ],
    [
      'a ScyllaCluster with members: "three"',
      `apiVersion: scylla.scylladb.com/v1
kind: ScyllaCluster
metadata: {name: broken}
spec:
  version: 6.2.3
  datacenter:
    name: dc1
    racks: [{name: r1, members: "three", storage: {capacity: 1Gi}}]
`,
    ],
    [
      'a Certificate with an unknown field',
      `apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: broken}
spec:
  secretName: broken-tls
  dnsNames: [broken]
  issuerRef: {name: ca, kind: Issuer}
  renewEvery: 720h
`,
    ],
    [
      'a Certificate without an issuerRef',
      `apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: broken}
spec:
  secretName: broken-tls
  dnsNames: [broken]
`,
    ],
  ])('rejects %s', (_name, manifest) => {
    const result = kubeconform(manifest);
    expect(result.exitCode).not.toBe(0);
    expect(result.summary).toMatchObject({ valid: 0, invalid: 1, errors: 0, skipped: 0 });
    expect(result.resources.map((r) => r.status)).toEqual(['statusInvalid']);
  });
});
