"""Which broken streams are resumed, and how."""

from __future__ import annotations

from dataclasses import dataclass

import grpc


@dataclass(frozen=True)
class ReconnectPolicy:
    """How a broken stream is resumed (see :meth:`LoaderClient.stream_batches`).

    Attributes:
        attempts: Reconnection attempts in a row without receiving a batch before the stream
            fails with the last error; a received batch resets the count. 0 turns
            reconnection off.
        initial_backoff: Seconds before the first attempt, doubled for each further one (with
            jitter).
        max_backoff: Cap of the delay between attempts, in seconds.
        retry_on_resource_exhausted: Also resume after RESOURCE_EXHAUSTED, which a loader
            returns when it already serves as many streams as it admits.
    """

    attempts: int = 10
    initial_backoff: float = 0.1
    max_backoff: float = 5.0
    retry_on_resource_exhausted: bool = True

    def __post_init__(self) -> None:
        if self.attempts < 0:
            raise ValueError(f"attempts must be 0 or more, got {self.attempts}")
        if not (0 < self.initial_backoff <= self.max_backoff):
            raise ValueError(
                "backoffs must satisfy 0 < initial_backoff <= max_backoff, got "
                f"{self.initial_backoff} and {self.max_backoff}"
            )


def is_retryable(code: grpc.StatusCode, details: str, retry_on_resource_exhausted: bool) -> bool:
    """Whether a broken stream is worth resuming from its last token: only statuses that say
    the connection or the loader went away, never one about the request itself
    (INVALID_ARGUMENT, NOT_FOUND, DATA_LOSS, DEADLINE_EXCEEDED...), which a new call would meet
    again. The caller checks first whether it cancelled the call itself. UNAUTHENTICATED and
    PERMISSION_DENIED are never retried: the same token would be refused again (a token
    function that failed comes as UNAUTHENTICATED too, see ``from_rpc_error``).

    - UNAVAILABLE: a dropped connection, a killed loader, a refused connect, a server shutting
      down, retryable database trouble.
    - CANCELLED that the client did not cause: a server's forced shutdown can surface so.
    - INTERNAL about an HTTP/2 RST_STREAM: the stream was reset below gRPC (a proxy, a dying
      connection) without a status from the service.
    - RESOURCE_EXHAUSTED when ``retry_on_resource_exhausted``: the loader's admission limit,
      but not grpc's own "message larger than max", which the same request would hit again.
    """
    if code == grpc.StatusCode.UNAVAILABLE:
        return True
    if code == grpc.StatusCode.CANCELLED:
        return True
    if code == grpc.StatusCode.INTERNAL:
        return "RST_STREAM" in details
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return retry_on_resource_exhausted and "larger than max" not in details
    return False
