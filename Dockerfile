# scylla-loader: the gRPC loader, run as `serve` by default.
#
#   docker build -t scylla-loader .
#   docker run --read-only --user 10001:10001 -p 50051:50051 -p 9464:9464 \
#     -e SCYLLA_LOADER_CONTACT_POINTS=scylla-0,scylla-1 -e SCYLLA_LOADER_RESUME_KEY=... scylla-loader
#
# Stages: probe (grpc_health_probe for HEALTHCHECK), native (the Rust transform module), build
# (dev dependencies, tsc), prod-deps (production dependencies only) and the runtime image, which
# holds dist/, proto/, the production node_modules, package.json, the compiled native module,
# the probe and its health check script, owned by root and run as UID 10001.

# grpc_health_probe, built by the same script the tests install it with (see that script for why
# it is built from grpc-go rather than go-installed from grpc-ecosystem/grpc-health-probe).
FROM golang:1.24-bookworm AS probe
ENV CGO_ENABLED=0 SCYLLA_LOADER_TOOLS=/opt/tools
COPY scripts/tools/grpc-health-probe.sh /src/grpc-health-probe.sh
RUN bash /src/grpc-health-probe.sh

# The native transform module (native/, Rust through N-API, libjpeg-turbo built from the crate's
# vendored source with its SIMD code): the toolchain stays in this stage, the image gets the
# compiled .node file only. Same Debian release as the runtime, so the same glibc.
FROM rust:1.95-bookworm AS native
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends cmake nasm \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src/native
COPY native/Cargo.toml native/Cargo.lock native/build.rs native/build.sh ./
COPY native/src ./src
RUN ./build.sh

# One pin of Node for every Node stage: the runtime must match what built node_modules.
FROM node:20.20-bookworm-slim AS node-base
WORKDIR /app

# Build: all dependencies (install scripts off, as in development: nothing needs one), the
# generated proto types, tsc into dist/, and the descriptor sets server reflection serves
# (compiled from proto/ by buf, a dev dependency, and copied to dist/src/generated/).
FROM node-base AS build
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY proto ./proto
COPY src ./src
# The runtime leaves out what only development machines use: the local Cassandra launcher
# (src/devdb: a JVM and jars from Maven Central) and the photo datasets (src/datasets/photos: an
# apt-get download). The CLI then says so for `db start` and `prepare photos`; `demo` runs
# against the cluster SCYLLA_LOADER_CONTACT_POINTS names.
RUN npm run build && rm -rf dist/src/devdb dist/src/datasets/photos

# Production dependencies only.
FROM node-base AS prod-deps
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node-base AS runtime
# Nothing is written at run time (logs go to stdout), so the root filesystem can be read-only;
# /tmp is the only place a library may write to.
ENV NODE_ENV=production \
    SCYLLA_LOADER_GRPC_PORT=50051 \
    SCYLLA_LOADER_METRICS_PORT=9464 \
    SCYLLA_LOADER_NATIVE_TRANSFORMS=on
RUN groupadd --system --gid 10001 loader \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin loader
COPY --from=probe /opt/tools/bin/grpc_health_probe /usr/local/bin/grpc_health_probe
# Executable in the repository (mode 755), which COPY keeps.
COPY scripts/docker/healthcheck.sh /usr/local/bin/scylla-loader-healthcheck
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=native /src/native/scylla_loader_native.node ./native/scylla_loader_native.node
COPY proto ./proto
COPY package.json ./
USER 10001:10001
# gRPC (with the standard health service) and Prometheus /metrics.
EXPOSE 50051 9464
# The health check reads the loader's own settings (host, ports, TLS) from the environment, so
# a container with gRPC TLS or a moved port stays healthy: see scripts/docker/healthcheck.sh.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/usr/local/bin/scylla-loader-healthcheck"]
ENTRYPOINT ["node", "dist/src/cli/main.js"]
# serve listens on 0.0.0.0 (SCYLLA_LOADER_HOST) and so refuses to start without a tokens file
# (SCYLLA_LOADER_AUTH_TOKENS_FILE) or mutual TLS, unless SCYLLA_LOADER_ALLOW_UNAUTHENTICATED=true
# says an open loader is meant (docs/security.md).
CMD ["serve"]
