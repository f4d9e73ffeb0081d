"""Generates the gRPC stubs of ``scylla_loader.v1`` from the repository's ``proto/``.

The stubs are committed (``src/scylla_loader/v1/``) so that the package builds from
``clients/python`` alone, without the repository's ``proto/`` folder (which lies outside the
package's build root) and without grpcio-tools at install time. ``tests/unit/test_stubs_drift.py``
regenerates them into a temporary folder and fails when they differ from the committed ones, so
a change to ``proto/`` cannot ship with stale stubs.

Usage: ``python scripts/generate_stubs.py [out_dir]`` (default: ``src``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from grpc_tools import protoc  # type: ignore[import-untyped]

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = PACKAGE_ROOT.parent.parent / "proto"
PROTO_FILE = "scylla_loader/v1/loader.proto"


def generate(out_dir: Path) -> None:
    """Writes ``loader_pb2.py``, ``loader_pb2.pyi`` and ``loader_pb2_grpc.py`` under ``out_dir``."""
    target = out_dir / "scylla_loader" / "v1"
    target.mkdir(parents=True, exist_ok=True)
    well_known = Path(protoc.__file__).resolve().parent / "_proto"
    code = protoc.main(
        [
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"-I{well_known}",
            f"--python_out={out_dir}",
            f"--pyi_out={out_dir}",
            f"--grpc_python_out={out_dir}",
            PROTO_FILE,
        ]
    )
    if code != 0:
        raise SystemExit(f"protoc failed with exit code {code} on {PROTO_ROOT / PROTO_FILE}")


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE_ROOT / "src")
