"""LoaderDataset with DataLoader workers, DDP ranks, a killed loader and StatefulDataLoader
checkpoints, against a real loader and the real node."""

from __future__ import annotations

import collections
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader

from scylla_loader import LoaderClient, LoaderError, ReconnectPolicy
from scylla_loader.torch import LoaderDataset

from .conftest import Mnist, split_ids
from .loader_process import LoaderProcess, free_port

pytestmark = pytest.mark.integration

PACKAGE = Path(__file__).resolve().parents[2]


def run_module(module: str, *args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=PACKAGE,
        env={**os.environ, **(env or {})},
    )


def run_ranks(module: str, world: int, tmp_path: Path, **env: str) -> list[Any]:
    """Runs `python -m module RANK OUT` for each rank of a gloo group of `world` processes
    (MASTER_ADDR, MASTER_PORT, WORLD_SIZE and `env` in their environment) and returns what
    each wrote to OUT."""
    env = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()), "WORLD_SIZE": str(world),
           **env}
    outs = [tmp_path / f"rank{r}.json" for r in range(world)]
    ranks = [run_module(module, str(r), str(outs[r]), env=env) for r in range(world)]
    for p in ranks:
        assert p.wait(timeout=600) == 0
    return [json.loads(o.read_text()) for o in outs]


def stream_ids(target: str, split: str, *, epoch: int, rank: int, world: int, seed: int) -> set[str]:
    with LoaderClient(target) as client:
        stream = client.stream_batches(
            "mnist", split, batch_size=1000, seed=seed, first_epoch=epoch, rank=rank,
            world_size=world, shard_rule="pad",
        )
        return {i for b in stream for i in b.ids}


def test_exactly_once_with_two_ddp_ranks_of_two_workers_over_two_epochs(
    loader: LoaderProcess, mnist: Mnist, tmp_path: Path
) -> None:
    world, workers = 2, 2
    results = run_ranks("tests.integration.ddp_rank", world, tmp_path,
                        LOADER_TARGET=loader.target, SPLIT=mnist.val)

    every = set(split_ids(loader.target, mnist.dataset, mnist.val))
    n = len(every)
    per_stream = math.ceil(n / (world * workers))  # the pad rule
    for epoch in ("0", "1"):
        ids = [i for r in results for i in r[epoch]["ids"]]
        assert set(ids) == every, "the union of the ranks' samples is the split"
        counts = collections.Counter(ids)
        # pad repeats exactly W*n*ceil(N/(W*n)) - N samples, each once; nothing else twice
        assert len(ids) == world * workers * per_stream
        assert sum(c - 1 for c in counts.values()) == world * workers * per_stream - n
        assert max(counts.values()) <= 2
        assert results[0][epoch]["steps"] == results[1][epoch]["steps"] > 0
    # Epoch 1 is epoch 1's permutation in the persistent workers (set_epoch reached them):
    # each rank received exactly the shares of its two worker streams for epoch 1.
    for r in range(world):
        for epoch in (0, 1):
            expected = set().union(*(
                stream_ids(loader.target, mnist.val, epoch=epoch, rank=r * workers + w,
                           world=world * workers, seed=11)
                for w in range(workers)
            ))
            assert set(results[r][str(epoch)]["ids"]) == expected
        assert set(results[r]["0"]["ids"]) != set(results[r]["1"]["ids"])


def test_persistent_workers_advance_by_themselves_and_follow_set_epoch(
    loader: LoaderProcess, mnist: Mnist
) -> None:
    dataset = LoaderDataset(loader.target, "mnist", mnist.val, batch_size=500, seed=3, return_ids=True)
    data = DataLoader(dataset, batch_size=None, num_workers=2, persistent_workers=True)

    def worker0(items: list[list[str]]) -> set[str]:
        # The DataLoader takes turns between its workers: worker 0 made items 0, 2, 4, ...
        return {i for ids in items[::2] for i in ids}

    def expected(epoch: int) -> set[str]:
        # worker 0 streams as rank 0 of 2
        return stream_ids(loader.target, mnist.val, epoch=epoch, rank=0, world=2, seed=3)

    passes = [[ids for _s, _l, ids in data] for _ in range(3)]
    for p in passes:
        assert sorted(i for ids in p for i in ids) == sorted(set(i for ids in passes[0] for i in ids))
    # Without set_epoch the persistent workers advance by themselves: 0, 1, 2.
    assert [worker0(p) for p in passes] == [expected(0), expected(1), expected(2)]
    assert expected(0) != expected(1)
    dataset.set_epoch(7)  # reaches the persistent workers through shared memory
    assert worker0([ids for _s, _l, ids in data]) == expected(7)


def test_a_sigkilled_loader_is_resumed_under_a_dataloader_with_two_workers(
    loader: LoaderProcess, mnist: Mnist, resume_key: str, tmp_path: Path
) -> None:
    process = LoaderProcess(tmp_path, resume_key, port=free_port())
    process.start()
    try:
        # A small HTTP/2 window (no BDP growth) keeps the stream from sitting whole in the
        # client's buffers, so the kill lands mid-stream.
        dataset = LoaderDataset(
            process.target, "mnist", mnist.train, batch_size=256, seed=9, return_ids=True,
            client_options={"flow_control_window": 256 * 1024,
                            "channel_options": [("grpc.http2.bdp_probe", 0)]},
            # A loader restart takes 10-30 s on a loaded 2-core machine: the default policy
            # (10 attempts, 13-26 s in all) could give up before it serves again.
            reconnect=ReconnectPolicy(attempts=60, max_backoff=1.0),
        )
        data = DataLoader(dataset, batch_size=None, num_workers=2)
        ids: list[str] = []
        for step, (_samples, labels, batch_ids) in enumerate(data):
            ids += batch_ids
            if step == 20:
                process.kill()
                time.sleep(1.0)
                process.start()
        restarted = [e for e in process.events() if e.get("event") == "stream_start"]
    finally:
        process.stop()
    assert len(ids) == len(set(ids)) == mnist.sizes["train"]
    assert set(ids) == set(split_ids(loader.target, mnist.dataset, mnist.train))
    assert len(restarted) == 2 and all(e["resumed"] for e in restarted), restarted


def checkpoint_run(loader: LoaderProcess, mnist: Mnist, tmp_path: Path, name: str, **args: Any) -> dict[int, list[list[str]]]:
    out = tmp_path / f"{name}.json"
    spec = {"target": loader.target, "split": mnist.val, "batch_size": 128, "out": str(out), **args}
    p = run_module("tests.integration.stateful_run", json.dumps(spec))
    assert p.wait(timeout=300) == 0, name
    return {int(k): v for k, v in json.loads(out.read_text()).items()}


def test_stateful_dataloader_checkpoints_resume_exactly_the_rest(
    loader: LoaderProcess, mnist: Mnist, tmp_path: Path
) -> None:
    ck = {k: str(tmp_path / f"{k}.pt") for k in ("mid", "mid2", "end_in", "end_after")}
    first = checkpoint_run(
        loader, mnist, tmp_path, "first", first=0, last=1, save_after=10, save_to=ck["mid"],
        save_end_in=ck["end_in"], save_end_after=ck["end_after"],
    )
    e0, e1 = first[0], first[1]
    flat = lambda items: [i for batch in items for i in batch]  # noqa: E731
    assert len(set(flat(e0))) == len(flat(e0)) == mnist.sizes["val"]
    assert set(flat(e1)) == set(flat(e0)) and flat(e1) != flat(e0)

    # Mid-epoch, then a second resume within the same epoch: exactly the rest, same order.
    mid = checkpoint_run(loader, mnist, tmp_path, "mid", load=ck["mid"], first=0, last=1,
                         save_after=10, save_to=ck["mid2"])
    assert mid[0] == e0[10:] and mid[1] == e1
    mid2 = checkpoint_run(loader, mnist, tmp_path, "mid2", load=ck["mid2"], first=0, last=1)
    assert mid2[0] == e0[20:] and mid2[1] == e1

    # After the epoch's last item, inside the loop: nothing left of epoch 0, epoch 1 in full.
    end_in = checkpoint_run(loader, mnist, tmp_path, "end_in", load=ck["end_in"], first=0, last=1)
    assert end_in[0] == [] and end_in[1] == e1
    # After the epoch's loop ended: the next epoch in full (not dropped).
    end_after = checkpoint_run(loader, mnist, tmp_path, "end_after", load=ck["end_after"], first=1, last=1)
    assert end_after[1] == e1


def test_a_corrupt_or_foreign_state_is_refused(loader: LoaderProcess, mnist: Mnist) -> None:
    dataset = LoaderDataset(loader.target, "mnist", mnist.val, batch_size=100, seed=1)
    it = iter(dataset)
    next(it)
    state = dataset.state_dict()
    it.close()
    for broken in ({}, {**state, "version": 99}, {**state, "epoch": "zero"}, {**state, "resume_token": 5}):
        with pytest.raises(ValueError, match="LoaderDataset state"):
            LoaderDataset(loader.target, "mnist", mnist.val, batch_size=100, seed=1).load_state_dict(broken)
    other = LoaderDataset(loader.target, "mnist", mnist.val, batch_size=50, seed=1)
    other.load_state_dict(state)
    with pytest.raises(ValueError, match="saved by a different stream"):
        next(iter(other))
    damaged = LoaderDataset(loader.target, "mnist", mnist.val, batch_size=100, seed=1)
    token = state["resume_token"]
    damaged.load_state_dict({**state, "resume_token": bytes([token[0] ^ 1]) + token[1:]})
    with pytest.raises(LoaderError) as caught:
        next(iter(damaged))
    assert caught.value.code_name == "INVALID_ARGUMENT"


def test_decoding_and_pin_memory(loader: LoaderProcess, mnist: Mnist) -> None:
    for decode in ("pil", "torchvision"):
        dataset = LoaderDataset(loader.target, "mnist", mnist.test, batch_size=64, decode=decode)
        images, labels = next(iter(DataLoader(dataset, batch_size=None, pin_memory=True)))
        assert images.shape == (64, 1, 28, 28) and images.dtype == torch.uint8
        assert labels.dtype == torch.int64 and int(labels.min()) >= 0 and int(labels.max()) <= 9
        assert 20 < float(images.float().mean()) < 80  # real digits, not zeros
    raw = LoaderDataset(loader.target, "mnist", mnist.test, batch_size=8,
                        transform=lambda b: b[:8])
    samples, _ = next(iter(raw))
    assert all(s == b"\x89PNG\r\n\x1a\n" for s in samples)


def test_spawned_workers_share_the_epoch_too(loader: LoaderProcess, mnist: Mnist) -> None:
    dataset = LoaderDataset(loader.target, "mnist", mnist.val, batch_size=500, seed=4, return_ids=True)
    data = DataLoader(dataset, batch_size=None, num_workers=2, persistent_workers=True,
                      multiprocessing_context="spawn")
    first = [ids for _s, _l, ids in data]
    dataset.set_epoch(5)
    second = [ids for _s, _l, ids in data]
    for epoch, items in ((0, first), (5, second)):
        assert {i for ids in items[::2] for i in ids} == stream_ids(
            loader.target, mnist.val, epoch=epoch, rank=0, world=2, seed=4
        )


def test_stateful_dataloader_without_workers_resumes_exactly_the_rest(
    loader: LoaderProcess, mnist: Mnist
) -> None:
    from torchdata.stateful_dataloader import StatefulDataLoader

    def make() -> tuple[LoaderDataset, StatefulDataLoader]:
        ds = LoaderDataset(loader.target, "mnist", mnist.test, batch_size=400, seed=2,
                           ordering="in-order", return_ids=True)
        return ds, StatefulDataLoader(ds, batch_size=None, num_workers=0)

    _, whole = make()
    everything = [ids for _s, _l, ids in whole]
    _, first = make()
    it = iter(first)
    head = [next(it)[2] for _ in range(5)]
    state = first.state_dict()
    _, second = make()
    second.load_state_dict(state)
    rest = [ids for _s, _l, ids in second]
    assert head + rest == everything
