"""Channel options sized like the TypeScript SDK's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .retry import ReconnectPolicy

MIB = 1024 * 1024

DEFAULT_FLOW_CONTROL_WINDOW = 64 * MIB
"""HTTP/2 stream window: a stream's rate is at most window / round trip, so it must be at least
bandwidth x RTT (1 GB/s over 20 ms needs 20 MB); grpc's BDP probing still grows it further."""

DEFAULT_MAX_RECEIVE_MESSAGE_LENGTH = 260 * MIB
"""The server's 256 MiB batch limit plus 4 MiB for ids, labels, sizes and the token."""


def channel_options(
    *,
    flow_control_window: int = DEFAULT_FLOW_CONTROL_WINDOW,
    max_receive_message_length: int = DEFAULT_MAX_RECEIVE_MESSAGE_LENGTH,
    keepalive_time: float = 30.0,
    keepalive_timeout: float = 10.0,
    keepalive_without_calls: bool = False,
    reconnect: ReconnectPolicy = ReconnectPolicy(),
    extra: Sequence[tuple[str, Any]] = (),
) -> list[tuple[str, Any]]:
    """The grpc channel options of a client: receive limit, HTTP/2 window, keepalive, and the
    channel's own reconnection backoff aligned with the client's, so that a call re-issued
    after a loader restart is not refused for seconds by a channel still backing off (grpc
    waits 1 s, then up to 120 s, by default). ``extra`` options come last and override.

    ``grpc.min_reconnect_backoff_ms`` is left at grpc's default on purpose: grpc takes it as the
    least time a connection attempt gets to finish its handshake, and at the 0.1 s of the
    initial backoff a loaded host (or a loader one round trip of 100 ms away) failed its first
    attempt ("timed out before receiving SETTINGS frame") and counted a reconnect.
    """
    options: dict[str, Any] = {
        "grpc.max_receive_message_length": max_receive_message_length,
        "grpc.http2.lookahead_bytes": flow_control_window,
        "grpc.keepalive_time_ms": int(keepalive_time * 1000),
        "grpc.keepalive_timeout_ms": int(keepalive_timeout * 1000),
        "grpc.keepalive_permit_without_calls": 1 if keepalive_without_calls else 0,
        "grpc.initial_reconnect_backoff_ms": int(reconnect.initial_backoff * 1000),
        "grpc.max_reconnect_backoff_ms": int(reconnect.max_backoff * 1000),
    }
    for key, value in extra:
        options[key] = value
    return list(options.items())
