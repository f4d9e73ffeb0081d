"""Merging worker states into a job state (pure: tokens are opaque here; the server checks
them)."""

from __future__ import annotations

from typing import Any

import pytest

from scylla_loader import RankState, merge_resume_tokens
from scylla_loader.torch import find_worker_states, merge_states
from scylla_loader.v1 import loader_pb2

JOB = "mnist|main/val|batch 64|seed 1|shuffle None|pad|drop_last False|ordering None"


def token(tag: int, base: bytes = bytes(16)) -> bytes:
    """A version 2 token's shape: version, job, rank, world size, base digest, the rest."""
    return bytes([2]) + bytes(16) + bytes(8) + base + bytes([tag]) * 20


def worker(rank: int, world: int, epoch: int, tok: bytes | None, done: bool = False,
           base: bytes | None = None) -> dict[str, Any]:
    return {
        "version": 1, "stream": f"{JOB}|rank {rank} of {world}", "job": JOB, "rank": rank,
        "world_size": world, "epoch": epoch, "resume_token": tok, "job_checkpoint": base,
        "epoch_done": done, "next_epoch": epoch + 1,
    }


def parse(checkpoint: bytes) -> loader_pb2.JobCheckpoint:
    message = loader_pb2.JobCheckpoint()
    message.ParseFromString(checkpoint)
    return message


def test_merges_every_worker_into_one_checkpoint_of_the_epoch() -> None:
    states = [worker(r, 4, 2, token(r)) for r in (3, 1, 0, 2)]
    job = merge_states(states)
    assert (job["kind"], job["job"], job["epoch"]) == ("scylla_loader.job", JOB, 2)
    cp = parse(job["job_checkpoint"])
    assert cp.world_size == 4
    assert [(e.rank, e.resume_token) for e in cp.ranks] == [(r, token(r)) for r in range(4)]
    assert cp.base == b""


def test_a_worker_done_with_the_epoch_counts_by_its_last_token() -> None:
    states = [worker(0, 2, 1, token(9), done=True), worker(1, 2, 1, token(1))]
    job = merge_states(states)
    assert job["epoch"] == 1
    cp = parse(job["job_checkpoint"])
    assert [e.epoch for e in cp.ranks] == [2, 1]  # its token says the epoch after
    all_done = merge_states([worker(r, 2, 1, token(r), done=True) for r in range(2)])
    assert (all_done["epoch"], all_done["job_checkpoint"]) == (2, None)


def test_nothing_delivered_is_a_fresh_epoch() -> None:
    job = merge_states([worker(r, 3, 4, None) for r in range(3)])
    assert (job["epoch"], job["job_checkpoint"]) == (4, None)


def test_keeps_the_base_while_a_worker_is_in_the_re_sharded_epoch() -> None:
    base = merge_resume_tokens(2, [RankState(0, token(5)), RankState(1, token(6))])
    digest = bytes(range(1, 17))
    inside = merge_states([worker(r, 3, 0, token(r, digest), base=base) for r in range(3)])
    assert parse(inside["job_checkpoint"]).base == base
    # Every worker past that epoch (tokens without a digest): the base is dropped.
    past = merge_states([worker(r, 3, 1, token(r), base=None) for r in range(3)])
    assert parse(past["job_checkpoint"]).base == b""


def test_refuses_missing_or_doubled_streams_other_jobs_and_mixed_epochs() -> None:
    with pytest.raises(ValueError, match="ranks 2 of world size 3 are missing"):
        merge_states([worker(r, 3, 0, token(r)) for r in range(2)])
    with pytest.raises(ValueError, match="rank 1 is given twice"):
        merge_states([worker(r, 3, 0, token(r)) for r in (0, 1, 1, 2)])
    other = dict(worker(1, 2, 0, token(1)), job=JOB.replace("seed 1", "seed 2"))
    with pytest.raises(ValueError, match="different jobs"):
        merge_states([worker(0, 2, 0, token(0)), other])
    with pytest.raises(ValueError, match="different epochs"):
        merge_states([worker(0, 2, 0, token(0)), worker(1, 2, 1, token(1))])
    with pytest.raises(ValueError, match="has not started an epoch"):
        merge_states([worker(0, 2, 0, token(0)), {**worker(1, 2, 0, None), "epoch": None}])


def test_finds_worker_states_nested_in_a_loader_state() -> None:
    states = [worker(r, 2, 0, token(r)) for r in range(2)]
    loader_state = {
        "_snapshot": {"_worker_snapshots": {f"worker_{i}": {"dataset_state": s}
                                            for i, s in enumerate(states)}},
        "_steps": 7,
    }
    assert find_worker_states([loader_state]) == states
    assert find_worker_states(states[0]) == [states[0]]


def test_the_job_state_keeps_the_workers_job_id_and_refuses_a_mix() -> None:
    states = [{**worker(r, 2, 1, token(r)), "job_id": "run-7"} for r in (0, 1)]
    assert merge_states(states)["job_id"] == "run-7"
    assert merge_states([worker(r, 2, 1, token(r)) for r in (0, 1)])["job_id"] is None
    mixed = [states[0], {**states[1], "job_id": "run-8"}]
    with pytest.raises(ValueError, match="different job ids"):
        merge_states(mixed)


def test_a_worker_still_about_to_skip_batches_is_refused() -> None:
    # Its token is from before the skip: merged, the skipped samples would come again.
    states = [worker(0, 2, 1, token(0)), {**worker(1, 2, 1, token(1)), "skip_batches": [4, 6]}]
    with pytest.raises(ValueError, match="stream rank 1 still has batches 4 to 6 to skip"):
        merge_states(states)
    states[1]["skip_batches"] = None  # delivered past the skip
    assert merge_states(states)["epoch"] == 1
