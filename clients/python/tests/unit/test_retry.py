import grpc
import pytest

from scylla_loader.retry import ReconnectPolicy, is_retryable

S = grpc.StatusCode


@pytest.mark.parametrize(
    ("code", "details", "expected"),
    [
        (S.UNAVAILABLE, "Socket closed", True),
        (S.UNAVAILABLE, "failed to connect to all addresses", True),
        (S.CANCELLED, "Cancelled", True),
        (S.INTERNAL, "Received RST_STREAM with error code 2", True),
        (S.INTERNAL, "boom", False),
        (S.RESOURCE_EXHAUSTED, "too many streams", True),
        (S.RESOURCE_EXHAUSTED, "Received message larger than max (9 vs. 4)", False),
        (S.INVALID_ARGUMENT, "batch_size must be", False),
        (S.NOT_FOUND, "no dataset", False),
        (S.DATA_LOSS, "missing sample", False),
        (S.DEADLINE_EXCEEDED, "Deadline Exceeded", False),
    ],
)
def test_only_transport_and_admission_failures_are_resumed(
    code: grpc.StatusCode, details: str, expected: bool
) -> None:
    assert is_retryable(code, details, retry_on_resource_exhausted=True) is expected


def test_resource_exhausted_can_be_turned_off() -> None:
    assert not is_retryable(S.RESOURCE_EXHAUSTED, "too many streams", retry_on_resource_exhausted=False)


def test_policy_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="attempts"):
        ReconnectPolicy(attempts=-1)
    with pytest.raises(ValueError, match="initial_backoff"):
        ReconnectPolicy(initial_backoff=10, max_backoff=1)
