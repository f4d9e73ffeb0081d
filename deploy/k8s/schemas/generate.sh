#!/usr/bin/env bash
# Writes the strict JSON schema of cert-manager's Certificate (cert-manager.io/v1) that
# kubeconform validates the cert-manager overlay against, offline, into
# deploy/k8s/schemas/cert-manager.io/certificate_v1.json (kubeconform's
# {{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json layout).
#
# Vendored in the repository rather than made by scripts/tools/k8s-schemas.sh: it is one small
# file, and the test needs no setup step for it. Source: the CRD YAML of the Go module
# github.com/cert-manager/cert-manager (deploy/crds/crd-certificates.yaml; the Helm markers in it
# sit in comments and quoted strings, so it parses as plain YAML), made strict the same way as
# k8s-schemas.sh does the operators' CRDs. Run again after raising CERT_MANAGER_VERSION.
set -euo pipefail
CERT_MANAGER_VERSION=v1.17.2
CERT_MANAGER_SUM='h1:QQYTEOsHf/Z3BFzKH2sIILHJwZA5Ut0LYZlHyNViupg='
here=$(cd "$(dirname "$0")" && pwd)
: "${SCYLLA_LOADER_TOOLS:=${XDG_CACHE_HOME:-$HOME/.cache}/scylla-loader/tools}"

json=$(cd "$(mktemp -d)" && go mod download -json "github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION")
dir=$(printf '%s' "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
sum=$(printf '%s' "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Sum"])')
[ "$sum" = "$CERT_MANAGER_SUM" ] || { echo "cert-manager has hash $sum, expected $CERT_MANAGER_SUM" >&2; exit 1; }

PYTHONPATH="$SCYLLA_LOADER_TOOLS/py" python3 - "$dir/deploy/crds/crd-certificates.yaml" \
  "$here/cert-manager.io/certificate_v1.json" <<'PY'
import json, os, sys
import yaml

source, target = sys.argv[1:]


def strict(schema):
    """An OpenAPI v3 CRD schema as a strict JSON schema (as scripts/tools/k8s-schemas.sh)."""
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


with open(source) as f:
    crd = next(d for d in yaml.safe_load_all(f) if d and d.get("kind") == "CustomResourceDefinition")
version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
schema = strict(version["schema"]["openAPIV3Schema"])
schema["properties"]["apiVersion"] = {"type": "string", "enum": ["cert-manager.io/v1"]}
schema["properties"]["kind"] = {"type": "string", "enum": ["Certificate"]}
schema["$schema"] = "http://json-schema.org/draft-07/schema#"
os.makedirs(os.path.dirname(target), exist_ok=True)
with open(target, "w") as f:
    json.dump(schema, f, indent=1, sort_keys=True)
    f.write("\n")
PY
echo "wrote $here/cert-manager.io/certificate_v1.json (cert-manager $CERT_MANAGER_VERSION)" >&2
# The repository's formatting, so `prettier --check .` passes on the vendored file.
(cd "$here/../../.." && npx prettier --log-level warn --write "$here/cert-manager.io/certificate_v1.json")
