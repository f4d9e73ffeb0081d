"""The package as users install it: the wheel built from clients/python, installed in a bare
venv with the lowest grpcio, protobuf and numpy it supports (requirements/floor-lock.txt),
streams a split from a real loader."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from .conftest import Mnist
from .loader_process import LoaderProcess

pytestmark = pytest.mark.integration

PACKAGE = Path(__file__).resolve().parents[2]
LOCK = PACKAGE / "requirements" / "floor-lock.txt"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "scylla-loader" / "python"


def run(*args: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{args}: {done.stderr[-3000:]}"
    return done.stdout


def floor_venv() -> Path:
    """A venv holding only the floor versions, made once per lock file (downloads about 25 MB
    the first time; pip's cache beside the test venv's keeps them)."""
    key = hashlib.sha256(LOCK.read_bytes() + sys.version.encode()).hexdigest()[:16]
    venv = CACHE / f"floor-{key}"
    if not (venv / ".complete").exists():
        shutil.rmtree(venv, ignore_errors=True)
        run(sys.executable, "-m", "venv", venv)
        run(venv / "bin" / "pip", "install", "--quiet", "--no-deps", "--cache-dir", CACHE / "pip",
            "-r", LOCK)
        (venv / ".complete").touch()
    return venv


def test_the_wheel_streams_with_the_lowest_supported_grpcio_and_protobuf(
    loader: LoaderProcess, mnist: Mnist, tmp_path: Path
) -> None:
    # Built from a copy: a build in place would leave build/ and an egg-info behind.
    source = tmp_path / "src"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns(
        "build", "dist", "*.egg-info", "__pycache__", ".mypy_cache", "tests", "bench"))
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
        "-w", tmp_path / "dist", source)
    wheels = list((tmp_path / "dist").glob("scylla_loader-*.whl"))
    assert len(wheels) == 1, wheels
    venv = floor_venv()
    run(venv / "bin" / "pip", "install", "--quiet", "--no-deps", "--force-reinstall", wheels[0])
    out = run(venv / "bin" / "python", Path(__file__).with_name("wheel_smoke.py"), loader.target,
              mnist.dataset, mnist.val, cwd=tmp_path)
    result = json.loads(out.strip().splitlines()[-1])
    assert result["samples"] == result["ids"] == mnist.sizes["val"]
    assert result["labels"] == list(range(10))
    floors = {}
    for line in LOCK.read_text().splitlines():
        requirement = Requirement(line) if line and not line.startswith("#") else None
        if requirement and (requirement.marker is None or requirement.marker.evaluate()):
            floors[requirement.name] = str(requirement.specifier).removeprefix("==")
    assert (result["grpc"], result["protobuf"]) == (floors["grpcio"], floors["protobuf"])
