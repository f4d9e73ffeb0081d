"""forksafe: before a fork, gRPC's core threads left by a closed client are waited out; with a
client open, the fork is not held up."""

from __future__ import annotations

import time

import grpc
import pytest

from scylla_loader import LoaderClient, LoaderError
from scylla_loader.client import open_clients
from scylla_loader.torch import forksafe


def _call_nowhere(client: LoaderClient) -> None:
    # A call to a port where nothing listens starts gRPC's threads and fails at once.
    try:
        client.describe_dataset("mnist", timeout=2)
    except LoaderError as error:
        assert error.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def test_a_closed_clients_grpc_threads_are_waited_out_before_a_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from scylla_loader import client as client_module

    # Clients other tests of this process left open do not count here.
    monkeypatch.setattr(client_module, "_open_clients", {"pid": os.getpid(), "count": 0})
    client = LoaderClient("127.0.0.1:1", connect_timeout=1.0)
    _call_nowhere(client)
    assert open_clients() == 1
    assert forksafe.grpc_threads(), "a call starts gRPC's threads"
    # Open: nothing to wait for, the fork goes ahead at once, with a warning naming the clients.
    monkeypatch.setattr(forksafe, "_warned", False)
    started = time.monotonic()
    with pytest.warns(RuntimeWarning, match="forks with 1 LoaderClient"):
        assert forksafe.wait_for_grpc_threads() is False
    assert time.monotonic() - started < 0.1
    client.close()
    assert open_clients() == 0
    assert forksafe.wait_for_grpc_threads() is True
    assert forksafe.grpc_threads() == []


def test_loader_dataset_registers_the_wait_before_forks() -> None:
    import scylla_loader.torch  # noqa: F401  (importing LoaderDataset registers it)

    assert forksafe._registered


def test_a_client_dropped_without_close_no_longer_counts_as_open(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc
    import os

    from scylla_loader import client as client_module

    monkeypatch.setattr(client_module, "_open_clients", {"pid": os.getpid(), "count": 0})
    client = LoaderClient("127.0.0.1:1", connect_timeout=1.0)
    assert open_clients() == 1
    del client
    gc.collect()
    assert open_clients() == 0


def test_grpc_threads_of_another_user_do_not_hold_up_a_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from scylla_loader import client as client_module

    monkeypatch.setattr(client_module, "_open_clients", {"pid": os.getpid(), "count": 0})
    monkeypatch.setattr(forksafe, "grpc_threads", lambda: ["event_engine"])
    # No client of ours ever closed: nothing to wait out.
    monkeypatch.setattr(client_module, "_closed", {"at": None})
    started = time.monotonic()
    assert forksafe.wait_for_grpc_threads(timeout=1.0) is False
    assert time.monotonic() - started < 0.1
    # One closed a moment ago: its threads are waited for, up to the bound.
    monkeypatch.setattr(client_module, "_closed", {"at": time.monotonic()})
    started = time.monotonic()
    assert forksafe.wait_for_grpc_threads(timeout=0.3) is False
    assert 0.3 <= time.monotonic() - started < 1.0


def test_a_client_another_process_opened_leaves_this_ones_count_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # As after a fork: the child closes (or drops) a client the parent opened. Simulated by the
    # client's opener pid, since a real fork here would make gRPC calls cross it.
    import os

    from scylla_loader import client as client_module

    monkeypatch.setattr(client_module, "_open_clients", {"pid": os.getpid(), "count": 0})
    inherited = LoaderClient("127.0.0.1:1", connect_timeout=1.0)
    own = LoaderClient("127.0.0.1:1", connect_timeout=1.0)
    assert open_clients() == 2
    inherited._opened_by = os.getpid() + 1  # opened "by the parent"
    inherited.close()
    assert open_clients() == 2  # not this process's to uncount
    own.close()
    assert open_clients() == 1
