#!/bin/sh
# The image's HEALTHCHECK: asks the loader's gRPC health service on its own port, the way the
# loader is configured to speak (read from the same SCYLLA_LOADER_* variables it reads).
#
#   plaintext gRPC          grpc_health_probe
#   TLS                     grpc_health_probe -tls -tls-no-verify: the probe dials 127.0.0.1,
#                           which the certificate need not name; the loader is itself
#   TLS with client CA      /healthz on the metrics port instead (HTTP, the same serving
#                           state): the probe has no client certificate to present
#
# Exit 0 when SERVING, 1 otherwise (Docker's convention).
set -eu

case "${SCYLLA_LOADER_HOST:-0.0.0.0}" in
  0.0.0.0 | :: | '[::]') host=127.0.0.1 ;;
  '['*) host="${SCYLLA_LOADER_HOST}" ;;
  *:*) host="[${SCYLLA_LOADER_HOST}]" ;;
  *) host="${SCYLLA_LOADER_HOST}" ;;
esac
case "${SCYLLA_LOADER_METRICS_HOST:-${SCYLLA_LOADER_HOST:-0.0.0.0}}" in
  0.0.0.0 | :: | '[::]') metrics_host=127.0.0.1 ;;
  '['*) metrics_host="${SCYLLA_LOADER_METRICS_HOST:-${SCYLLA_LOADER_HOST}}" ;;
  *:*) metrics_host="[${SCYLLA_LOADER_METRICS_HOST:-${SCYLLA_LOADER_HOST}}]" ;;
  *) metrics_host="${SCYLLA_LOADER_METRICS_HOST:-${SCYLLA_LOADER_HOST}}" ;;
esac
port="${SCYLLA_LOADER_GRPC_PORT:-50051}"
metrics_port="${SCYLLA_LOADER_METRICS_PORT:-9464}"

if [ -n "${SCYLLA_LOADER_TLS_CERT:-}" ] && [ -n "${SCYLLA_LOADER_TLS_CLIENT_CA:-}" ]; then
  exec node -e "
    fetch('http://${metrics_host}:${metrics_port}/healthz', { signal: AbortSignal.timeout(2000) }).then(
      (r) => process.exit(r.ok ? 0 : 1),
      (e) => { console.error(String(e)); process.exit(1); },
    );"
fi
if [ -n "${SCYLLA_LOADER_TLS_CERT:-}" ]; then
  exec grpc_health_probe -addr="${host}:${port}" -connect-timeout=2s -rpc-timeout=2s -tls -tls-no-verify
fi
exec grpc_health_probe -addr="${host}:${port}" -connect-timeout=2s -rpc-timeout=2s
