"""Fixtures of the integration tests: the MNIST dataset of the demo on the local node, and a
real loader process."""

from __future__ import annotations

import faulthandler
import json
import os
import secrets
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scylla_loader import LoaderClient, LoaderError

from .loader_process import LoaderProcess, cli

DATASET = "mnist"
SPLIT_SET = "main"

# The tests reach the local node and package registries only. Hugging Face's libraries (the
# ingest example's datasets, the Trainer recipe's transformers) are told so, here and in the
# processes the tests start, so none of them waits on a hub it cannot reach.
for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY"):
    os.environ.setdefault(_name, "1")


@dataclass(frozen=True)
class Mnist:
    dataset: str
    train: str
    val: str
    test: str
    sizes: dict[str, int]


def _ensure_mnist() -> None:
    """Ingests MNIST as the demo does unless the node already holds it (the demo's data then
    serves the tests, and the tests' the demo)."""
    described = cli("describe", DATASET, "--json", timeout=120)
    if described.returncode != 0 and "does not exist" not in described.stderr:
        # No database answering: start (or reuse) the local node, as the demo does.
        started = cli("db", "start")
        if started.returncode != 0:
            raise RuntimeError(f"no database and `db start` failed: {started.stderr[-3000:]}")
        described = cli("describe", DATASET, "--json", timeout=120)
    if described.returncode == 0 and json.loads(described.stdout).get("sampleCount", 0) >= 70000:
        return
    out = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "scylla-loader" / "mnist"
    for args in (("prepare", "mnist", "--out", str(out)),
                 ("ingest", DATASET, "--manifest", str(out / "manifest.csv"))):
        done = cli(*args)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed: {done.stderr[-3000:]}")


# Processes forked from this one (DataLoader workers) inherit this handler: on SIGUSR2 each
# prints the Python stacks of all its threads to stderr.
faulthandler.register(signal.SIGUSR2, all_threads=True)
_STACKS_BEFORE_TIMEOUT = 15.0


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, pending = [], [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def _dump_children_stacks() -> None:
    # Forked, not exec'd: the same command line as this process (so the handler is there; a
    # SIGUSR2 would end an exec'd one).
    with open("/proc/self/cmdline", "rb") as f:
        ours = f.read()
    for child in _descendants(os.getpid()):
        try:
            with open(f"/proc/{child}/cmdline", "rb") as f:
                if f.read() == ours:
                    os.kill(child, signal.SIGUSR2)
        except OSError:
            continue


_DUMP_TIMERS = pytest.StashKey[threading.Timer]()


def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> None:
    """pytest-timeout prints this process's stacks only; a DataLoader worker that waits forever
    is a child. When pytest-timeout sets a test's timer (its hook, with its own settings), a
    second one goes off shortly before it, and every forked child prints its own stacks.
    Returning None leaves the timeout itself to pytest-timeout."""
    if settings.timeout > _STACKS_BEFORE_TIMEOUT:
        timer = threading.Timer(settings.timeout - _STACKS_BEFORE_TIMEOUT, _dump_children_stacks)
        timer.daemon = True
        timer.start()
        item.stash[_DUMP_TIMERS] = timer


def pytest_timeout_cancel_timer(item: pytest.Item) -> None:
    timer = item.stash.get(_DUMP_TIMERS, None)
    if timer is not None:
        timer.cancel()


@pytest.fixture(scope="session")
def resume_key() -> str:
    return secrets.token_hex(32)


@pytest.fixture(scope="session")
def database() -> None:
    """The local node is up and holds MNIST (before any loader starts: it connects at once)."""
    _ensure_mnist()


@pytest.fixture(scope="session")
def loader(
    tmp_path_factory: pytest.TempPathFactory, resume_key: str, database: None
) -> Iterator[LoaderProcess]:
    process = LoaderProcess(tmp_path_factory.mktemp("loader"), resume_key)
    process.start()
    yield process
    process.stop()


@pytest.fixture(scope="session")
def mnist(loader: LoaderProcess) -> Mnist:
    with LoaderClient(loader.target) as client:
        try:
            split_set = client.get_split(DATASET, SPLIT_SET)
        except LoaderError as error:
            if error.code_name != "NOT_FOUND":
                raise
            # The demo's split set: train/val/test 8:1:1, balanced classes, seed 42.
            split_set = client.create_splits(
                DATASET, SPLIT_SET, parts={"train": 8, "val": 1, "test": 1},
                class_targets="balanced", seed=42,
            )
    names = {p.name: f"{split_set.name}@{split_set.version}/{p.name}" for p in split_set.parts}
    return Mnist(
        DATASET, names["train"], names["val"], names["test"],
        {p.name: p.size for p in split_set.parts},
    )


def split_ids(target: str, dataset: str, split: str) -> list[str]:
    """Every id of a split, from one uneven single-rank stream."""
    with LoaderClient(target) as client:
        return [i for b in client.stream_batches(dataset, split, batch_size=4096) for i in b.ids]
