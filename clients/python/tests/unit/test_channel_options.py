"""The channel options every client builds: reconnection aligned with the client's policy."""

from __future__ import annotations

from scylla_loader.channel_options import channel_options
from scylla_loader.retry import ReconnectPolicy


def test_reconnection_follows_the_policy_without_shortening_a_connection_attempt() -> None:
    options = dict(channel_options(reconnect=ReconnectPolicy(initial_backoff=0.25, max_backoff=7.0)))
    assert options["grpc.initial_reconnect_backoff_ms"] == 250
    assert options["grpc.max_reconnect_backoff_ms"] == 7000
    # grpc takes the minimum backoff as the least time a handshake gets: at 0.25 s a loaded host
    # or a far loader fails its first attempt, so it stays at grpc's default (20 s).
    assert "grpc.min_reconnect_backoff_ms" not in options


def test_extra_options_come_last_and_override() -> None:
    options = dict(channel_options(extra=[("grpc.keepalive_time_ms", 1234)]))
    assert options["grpc.keepalive_time_ms"] == 1234
