"""LoaderDataset under tensor-parallel layouts (data-parallel rank != global rank), against a
real loader and the real node."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Mnist, split_ids
from .loader_process import LoaderProcess
from .test_torch import run_ranks

pytestmark = pytest.mark.integration


def test_replicas_of_a_data_parallel_rank_get_identical_batches(
    loader: LoaderProcess, mnist: Mnist, tmp_path: Path
) -> None:
    # Tensor parallelism 2: data-parallel ranks 0 (processes 0, 1) and 1 (processes 2, 3).
    results = run_ranks("tests.integration.tp_rank", 4, tmp_path,
                        LOADER_TARGET=loader.target, SPLIT=mnist.val)
    every = split_ids(loader.target, mnist.dataset, mnist.val)
    for r, res in enumerate(results):
        assert res["given_rank"] == res["group_rank"] == [r // 2, 2]
    for way in ("given", "group"):
        # Replicas: the same batches in the same order; data-parallel ranks: disjoint shares
        # that together are the split (pad repeats at most one sample per stream).
        assert results[0][way] == results[1][way] and results[2][way] == results[3][way]
        dp0 = {i for ids in results[0][way] for i in ids}
        dp1 = {i for ids in results[2][way] for i in ids}
        assert dp0 | dp1 == set(every)
        assert len(dp0 & dp1) <= (4 if way == "given" else 2)
        assert len(results[0][way]) == len(results[2][way]) > 0
    # One job state for the whole job, the same on every process, replicas counted once.
    assert all(r["job"] == results[0]["job"] for r in results)
    assert results[0]["job"]["checkpoint"] != ""
    # Rank 0 alone read the whole split (rank 0 of 1) while the group was up.
    assert sorted(results[0]["alone"]) == sorted(every)


def test_the_ddp_example_evaluates_the_whole_test_split_on_rank_0(
    loader: LoaderProcess, mnist: Mnist
) -> None:
    import subprocess
    import sys

    split_set = mnist.train.rsplit("/", 1)[0]  # main@<version>
    done = subprocess.run(
        [sys.executable, "examples/ddp_mnist.py", "--target", loader.target,
         "--split-set", split_set, "--max-steps", "3"],
        cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"over {mnist.sizes['test']} samples" in done.stdout, done.stdout
