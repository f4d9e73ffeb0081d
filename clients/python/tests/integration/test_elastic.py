"""Elastic exactly-once: a DDP job of LoaderDataset ranks (2 DataLoader workers each) saves one
job state, and continues it at other world sizes, against a real loader and the real node."""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

import pytest
import torch

from .conftest import Mnist, split_ids
from .loader_process import LoaderProcess, free_port
from .test_torch import run_module

pytestmark = pytest.mark.integration


def run_world(
    world: int, loader: LoaderProcess, split: str, tmp: Path, name: str, **args: Any
) -> list[dict[str, Any]]:
    """Runs `world` DDP ranks of elastic_rank to the end; returns each rank's record."""
    env = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())}
    outs = [tmp / f"{name}-rank{r}.json" for r in range(world)]
    procs = [
        run_module(
            "tests.integration.elastic_rank",
            json.dumps({
                "rank": r, "world": world, "workers": 2, "target": loader.target, "split": split,
                "rule": "uneven", "last_epoch": 0, "out": str(outs[r]), **args,
            }),
            env=env,
        )
        for r in range(world)
    ]
    for p in procs:
        assert p.wait(timeout=300) == 0
    return [json.loads(o.read_text()) for o in outs]


def ids_of(records: list[dict[str, Any]], epoch: int) -> list[str]:
    return [i for r in records for i in r["ids"].get(str(epoch), [])]


def test_a_job_of_4_ranks_continues_at_3_then_at_5_within_one_epoch_exactly_once(
    loader: LoaderProcess, mnist: Mnist, tmp_path: Path
) -> None:
    every = sorted(split_ids(loader.target, mnist.dataset, mnist.val))
    first, second = tmp_path / "job-4.pt", tmp_path / "job-3.pt"
    w4 = run_world(4, loader, mnist.val, tmp_path, "w4", stop_after=3, save=str(first))
    assert all(r["steps"]["0"] == 3 for r in w4)
    job = torch.load(first, weights_only=False)
    assert job["epoch"] == 0 and isinstance(job["job_checkpoint"], bytes)
    # One job state for 8 streams: about 8 tokens, however large the split.
    assert len(job["job_checkpoint"]) < 8 * 200

    w3 = run_world(3, loader, mnist.val, tmp_path, "w3", load=str(first), stop_after=4,
                   save=str(second))
    assert all(r["steps"]["0"] == 4 for r in w3)
    # The rest of epoch 0, then epoch 1 in full, at world size 5.
    w5 = run_world(5, loader, mnist.val, tmp_path, "w5", load=str(second), last_epoch=1)

    epoch0 = ids_of(w4, 0) + ids_of(w3, 0) + ids_of(w5, 0)
    duplicated = [i for i, c in collections.Counter(epoch0).items() if c > 1]
    assert not duplicated, f"{len(duplicated)} samples delivered twice in epoch 0"
    assert sorted(epoch0) == every, "epoch 0 over three world sizes is the split exactly once"
    assert sorted(ids_of(w5, 1)) == every, "epoch 1 at the new size is the split exactly once"
