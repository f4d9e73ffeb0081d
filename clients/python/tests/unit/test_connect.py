"""A loader that is not there: the first connection fails after connect_timeout, naming the
address, and says "connecting" (not "resuming") meanwhile. Nothing listens on the port used."""

from __future__ import annotations

import logging
import socket
import time

import pytest

from scylla_loader import LoaderClient, LoaderError
from scylla_loader.torch import LoaderDataset


def nowhere() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def test_an_unreachable_loader_fails_after_connect_timeout_naming_the_address(
    caplog: pytest.LogCaptureFixture,
) -> None:
    target = nowhere()
    assert LoaderClient(target).connect_timeout == 10.0  # the default
    caplog.set_level(logging.WARNING, logger="scylla_loader")
    dataset = LoaderDataset(target, "d", "all", batch_size=8, client_options={"connect_timeout": 1.5})
    started = time.monotonic()
    with pytest.raises(LoaderError) as caught:
        next(iter(dataset))
    elapsed = time.monotonic() - started
    assert elapsed < 4, elapsed  # the default policy alone would retry for 13-26 s
    assert caught.value.code_name == "UNAVAILABLE"
    assert f"no loader answered at {target} within 1.5 s" in str(caught.value)
    messages = [r.getMessage() for r in caplog.records]
    assert messages and all("connecting" in m for m in messages), messages
    assert not any("resuming" in m for m in messages)
    with pytest.raises(ValueError, match="connect_timeout"):
        LoaderClient(target, connect_timeout=0)
