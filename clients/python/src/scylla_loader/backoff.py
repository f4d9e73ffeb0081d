"""Delays between reconnection attempts."""

from __future__ import annotations

import random as _random
from collections.abc import Callable


def backoff_delay(
    attempt: int,
    initial_backoff: float,
    max_backoff: float,
    random: Callable[[], float] = _random.random,
) -> float:
    """Seconds to wait before reconnection attempt ``attempt`` (1 for the first).

    Exponential from ``initial_backoff``, capped at ``max_backoff``, with "equal jitter" (a
    uniform draw from the upper half), so many trainers dropped by one loader do not come back
    in lockstep while each still waits at least half the nominal delay: within
    ``[ceiling / 2, ceiling]`` where ``ceiling = min(max_backoff, initial_backoff * 2**(attempt - 1))``.
    The same rule as the TypeScript SDK's ``backoffDelay``.
    """
    exponent = max(0, attempt - 1)
    ceiling = min(max_backoff, initial_backoff * 2.0**exponent)
    return ceiling / 2 + random() * ceiling / 2
