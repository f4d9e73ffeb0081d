import pytest

from scylla_loader.backoff import backoff_delay


@pytest.mark.parametrize(
    ("attempt", "ceiling"), [(1, 0.1), (2, 0.2), (3, 0.4), (6, 3.2), (7, 5.0), (50, 5.0)]
)
def test_delay_is_exponential_capped_with_equal_jitter(attempt: int, ceiling: float) -> None:
    assert backoff_delay(attempt, 0.1, 5.0, random=lambda: 0.0) == pytest.approx(ceiling / 2)
    assert backoff_delay(attempt, 0.1, 5.0, random=lambda: 0.999999) == pytest.approx(ceiling, rel=1e-5)


def test_attempt_zero_counts_as_the_first() -> None:
    assert backoff_delay(0, 0.1, 5.0, random=lambda: 0.5) == pytest.approx(0.075)
