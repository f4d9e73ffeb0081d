#!/usr/bin/env bash
# Installs grpc_health_probe into $SCYLLA_LOADER_TOOLS/bin. The Dockerfile builds the image's
# HEALTHCHECK probe with this same script, and the Dockerfile test runs it against the server
# started exactly as the image's CMD starts it.
#
# Why not `go install github.com/grpc-ecosystem/grpc-health-probe@v0.4.56`: the Go module proxy
# refuses that module ("403 Forbidden: This module version is not available"), so it cannot be
# installed here or on CI. This builds the same check from grpc-go's own health client instead:
# same name, same flags (-addr, -service, -connect-timeout, -rpc-timeout, and of the TLS ones
# -tls, -tls-no-verify, -tls-ca-cert, -tls-server-name; no client certificate flags)
# and the same exit codes (0 SERVING, 1 bad arguments, 2 connection failure, 3 RPC failure,
# 4 not SERVING), so switching back to the upstream binary later changes nothing else.
set -euo pipefail
GRPC_GO_VERSION=v1.75.1
STAMP="grpc-go-$GRPC_GO_VERSION-probe-2"
: "${SCYLLA_LOADER_TOOLS:=${XDG_CACHE_HOME:-$HOME/.cache}/scylla-loader/tools}"
bin="$SCYLLA_LOADER_TOOLS/bin"
stamp="$bin/.grpc_health_probe.version"

if [ -x "$bin/grpc_health_probe" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$STAMP" ]; then
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "error: grpc_health_probe is built with Go (1.23 or newer), which is not on PATH;" \
    "install Go and rerun scripts/setup.sh" >&2
  exit 1
fi
mkdir -p "$bin"
echo "building grpc_health_probe (grpc-go $GRPC_GO_VERSION) into $bin" >&2
src="$(mktemp -d)"
trap 'rm -rf "$src"' EXIT
cat >"$src/main.go" <<'GO'
// Command grpc_health_probe checks a server through the standard gRPC health service
// (grpc.health.v1.Health/Check) and exits 0 only when it answers SERVING.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

const (
	exitOK          = 0
	exitBadArgs     = 1
	exitConnFailure = 2
	exitRPCFailure  = 3
	exitUnhealthy   = 4
)

func main() {
	addr := flag.String("addr", "", "host:port of the gRPC server (required)")
	service := flag.String("service", "", "service to check (empty: the whole server)")
	connectTimeout := flag.Duration("connect-timeout", time.Second, "time to connect")
	rpcTimeout := flag.Duration("rpc-timeout", time.Second, "time for the health RPC")
	useTLS := flag.Bool("tls", false, "connect over TLS (default: plaintext)")
	noVerify := flag.Bool("tls-no-verify", false, "with -tls, do not verify the server's certificate")
	caCert := flag.String("tls-ca-cert", "", "with -tls, PEM file of the CA to verify the server with (default: the system's)")
	serverName := flag.String("tls-server-name", "", "with -tls, the name the certificate must carry (default: the address's host)")
	flag.Parse()
	if *addr == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "error: usage: grpc_health_probe -addr=host:port [-service=name] [-tls [-tls-no-verify] [-tls-ca-cert=file] [-tls-server-name=name]]")
		os.Exit(exitBadArgs)
	}
	creds := insecure.NewCredentials()
	if *useTLS {
		cfg := &tls.Config{InsecureSkipVerify: *noVerify, ServerName: *serverName}
		if *caCert != "" {
			pem, err := os.ReadFile(*caCert)
			if err != nil {
				fmt.Fprintf(os.Stderr, "error: cannot read -tls-ca-cert: %v\n", err)
				os.Exit(exitBadArgs)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				fmt.Fprintf(os.Stderr, "error: no PEM certificate in -tls-ca-cert %s\n", *caCert)
				os.Exit(exitBadArgs)
			}
		}
		creds = credentials.NewTLS(cfg)
	} else if *noVerify || *caCert != "" || *serverName != "" {
		fmt.Fprintln(os.Stderr, "error: -tls-no-verify, -tls-ca-cert and -tls-server-name need -tls")
		os.Exit(exitBadArgs)
	}
	os.Exit(probe(*addr, *service, *connectTimeout, *rpcTimeout, creds))
}

func probe(addr, service string, connectTimeout, rpcTimeout time.Duration, creds credentials.TransportCredentials) int {
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(creds),
		grpc.WithUserAgent("grpc_health_probe"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: invalid address %q: %v\n", addr, err)
		return exitBadArgs
	}
	defer conn.Close()

	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	conn.Connect()
	for state := conn.GetState(); state != connectivity.Ready; state = conn.GetState() {
		if !conn.WaitForStateChange(ctx, state) {
			fmt.Fprintf(os.Stderr, "timeout: failed to connect service %q within %v\n", addr, connectTimeout)
			return exitConnFailure
		}
	}

	rpcCtx, rpcCancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer rpcCancel()
	resp, err := healthpb.NewHealthClient(conn).Check(rpcCtx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		switch status.Code(err) {
		case codes.Unimplemented:
			fmt.Fprintf(os.Stderr, "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): %v\n", err)
		case codes.DeadlineExceeded:
			fmt.Fprintf(os.Stderr, "timeout: health rpc did not complete within %v\n", rpcTimeout)
		default:
			fmt.Fprintf(os.Stderr, "error: health rpc failed: %v\n", err)
		}
		return exitRPCFailure
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		fmt.Fprintf(os.Stderr, "service unhealthy (responded with %q)\n", resp.GetStatus().String())
		return exitUnhealthy
	}
	fmt.Printf("status: %v\n", resp.GetStatus().String())
	return exitOK
}
GO
build() {
  cd "$src"
  go mod init scylla-loader/grpc-health-probe >/dev/null 2>&1
  go get "google.golang.org/grpc@$GRPC_GO_VERSION" >/dev/null 2>&1
  go mod tidy >/dev/null 2>&1
  CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags='-s -w' \
    -o "$bin/grpc_health_probe" .
}
if ! (build) >"$src/build.log" 2>&1; then
  cat "$src/build.log" >&2
  echo "error: building grpc_health_probe from google.golang.org/grpc@$GRPC_GO_VERSION failed" \
    "(see above); the Dockerfile test needs it" >&2
  exit 1
fi
echo "$STAMP" >"$stamp"
