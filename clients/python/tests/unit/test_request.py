import pytest

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
