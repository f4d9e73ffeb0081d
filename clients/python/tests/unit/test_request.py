from typing import Any

import pytest

from scylla_loader import Replay
from scylla_loader.request import build_request
from scylla_loader.v1 import loader_pb2


def test_fields_and_enums_reach_the_proto() -> None:
    r = build_request(
        dataset="d", split="main/train", batch_size=32, seed=2**64 - 1, epochs=2, rank=1,
        world_size=4, shard_rule="pad", shuffle="none", ordering="in-order",
        missing_sample_policy="skip", resume_token=b"t",
    )
    assert r.seed == 2**64 - 1 and r.world_size == 4 and r.resume_token == b"t"
    assert r.shard_rule == loader_pb2.SHARD_RULE_PAD
    assert r.shuffle == loader_pb2.SHUFFLE_MODE_NONE
    assert r.ordering == loader_pb2.ORDERING_IN_ORDER
    assert r.missing_sample_policy == loader_pb2.MISSING_SAMPLE_POLICY_SKIP


def test_defaults_are_left_to_the_server() -> None:
    r = build_request(dataset="d", split="all", batch_size=1)
    assert r.shard_rule == loader_pb2.SHARD_RULE_UNSPECIFIED and r.resume_token == b""


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("seed", -1, "seed must be an integer in"),
        ("seed", 2**64, "seed must be an integer in"),
        ("rank", -1, "rank must be an integer in"),
        ("epochs", 1.5, "epochs must be an integer in"),
        ("shard_rule", "even", "shard_rule must be one of uneven, pad, drop"),
    ],
)
def test_values_the_proto_cannot_carry_fail_early(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_request(dataset="d", split="all", batch_size=1, **{field: value})  # type: ignore[arg-type]


def test_a_skip_goes_out_with_its_job_and_token() -> None:
    r = build_request(dataset="d", split="all", batch_size=1, job_id="run-7", resume_token=b"t",
                      skip_batches=(5, 9))
    assert (r.skip_batches.first_batch, r.skip_batches.last_batch) == (5, 9)
    assert not r.HasField("replay")


def test_a_replay_goes_out_as_the_ledger_range() -> None:
    r = build_request(dataset="d", split="all", batch_size=1, job_id="run-7",
                      replay=Replay(3, 2, 40, 45, world_size=4))
    assert (r.replay.epoch, r.replay.rank, r.replay.first_batch, r.replay.last_batch,
            r.replay.world_size) == (3, 2, 40, 45, 4)
    assert not r.HasField("skip_batches")
    # No last: the first batch only, said explicitly (not left to the server's reading of 0).
    one = build_request(dataset="d", split="all", batch_size=1, job_id="j", replay=Replay(0, 0, 7))
    assert (one.replay.first_batch, one.replay.last_batch, one.replay.world_size) == (7, 7, 0)


def test_without_skip_or_replay_neither_is_sent() -> None:
    r = build_request(dataset="d", split="all", batch_size=1, job_id="j", resume_token=b"t")
    assert not r.HasField("skip_batches") and not r.HasField("replay")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"skip_batches": (1, 2), "resume_token": b"t"}, "skip_batches needs job_id"),
        ({"replay": Replay(0, 0, 1)}, "replay needs job_id"),
        ({"skip_batches": (1, 2), "job_id": "j"}, "skip_batches needs a resume_token"),
        ({"skip_batches": (1, 2), "job_id": "j", "resume_token": b"t", "job_checkpoint": b"c"},
         "a job_checkpoint .* cannot name batches to skip"),
        ({"replay": Replay(0, 0, 1), "job_id": "j", "job_checkpoint": b"c"},
         "leave job_checkpoint empty"),
        ({"skip_batches": (1, 2), "replay": Replay(0, 0, 1), "job_id": "j", "resume_token": b"t"},
         "a replay or skips batches, not both"),
        ({"skip_batches": (3, 2), "job_id": "j", "resume_token": b"t"},
         r"ends \(batch 2\) before it starts \(batch 3\)"),
        ({"skip_batches": (-1, 2), "job_id": "j", "resume_token": b"t"},
         "skip_batches first must be an integer"),
        ({"skip_batches": [1, 2], "job_id": "j", "resume_token": b"t"}, r"a \(first, last\) tuple"),
        ({"replay": (0, 0, 1), "job_id": "j"}, "replay must be a scylla_loader.Replay"),
    ],
)
def test_skips_and_replays_the_server_would_refuse_fail_early(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        build_request(dataset="d", split="all", batch_size=1, **kwargs)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, 0, 5, 4), r"replay last \(4\) is below first \(5\)"),
        ((-1, 0, 0), "replay epoch must be an integer"),
        ((0, 0, 0, None, -1), "replay world_size must be an integer"),
        ((0, 2**32, 0), "replay rank must be an integer"),
    ],
)
def test_a_replay_no_request_could_carry_fails_where_it_is_made(
    args: tuple[Any, ...], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Replay(*args)
