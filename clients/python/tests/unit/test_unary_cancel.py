"""Cancelling the unary calls through a ``cancel`` event, against a real in-process gRPC server
whose methods run until the client goes away (a server-side slow call)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest

from scylla_loader import LoaderClient, LoaderError
from scylla_loader.v1 import loader_pb2, loader_pb2_grpc

SLOW_SECONDS = 30.0


class SlowServicer(loader_pb2_grpc.LoaderServiceServicer):  # type: ignore[misc]
    """Every unary method works until its call is cancelled (or 30 s pass) and records that the
    server saw the cancel; with ``fast`` set it answers at once."""

    def __init__(self) -> None:
        self.started = 0
        self.ended_by_cancel = threading.Event()
        self.fast = False

    def _slow(self, context: grpc.ServicerContext, response: Any) -> Any:
        self.started += 1
        if self.fast:
            return response
        context.add_callback(self.ended_by_cancel.set)
        deadline = time.monotonic() + SLOW_SECONDS
        while context.is_active() and time.monotonic() < deadline:
            time.sleep(0.01)
        return response

    def DescribeDataset(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._slow(context, loader_pb2.DescribeDatasetResponse(dataset=request.dataset))

    def CreateSplits(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._slow(context, loader_pb2.CreateSplitsResponse())

    def ListSplits(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._slow(context, loader_pb2.ListSplitsResponse())

    def GetSplit(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._slow(context, loader_pb2.GetSplitResponse())


@pytest.fixture()
def server() -> Iterator[tuple[SlowServicer, str]]:
    servicer = SlowServicer()
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    loader_pb2_grpc.add_LoaderServiceServicer_to_server(servicer, srv)
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    try:
        yield servicer, f"127.0.0.1:{port}"
    finally:
        srv.stop(0)


CALLS: dict[str, Callable[[LoaderClient, threading.Event], object]] = {
    "CreateSplits": lambda c, e: c.create_splits("d", "main", parts={"train": 1}, cancel=e),
    "DescribeDataset": lambda c, e: c.describe_dataset("d", cancel=e),
    "ListSplits": lambda c, e: c.list_splits("d", cancel=e),
    "GetSplit": lambda c, e: c.get_split("d", "main", cancel=e),
}


@pytest.mark.parametrize("method", list(CALLS))
def test_a_slow_call_is_cancelled_promptly_and_the_server_sees_it(
    server: tuple[SlowServicer, str], method: str
) -> None:
    servicer, target = server
    stop = threading.Event()
    with LoaderClient(target) as client:
        timer = threading.Timer(0.3, stop.set)
        timer.start()
        started = time.monotonic()
        with pytest.raises(LoaderError) as caught:
            CALLS[method](client, stop)
        elapsed = time.monotonic() - started
    assert caught.value.code == grpc.StatusCode.CANCELLED
    assert caught.value.method == method
    assert "cancelled by the caller" in str(caught.value)
    # Without the cancel the call would take SLOW_SECONDS; the bound leaves room for threads
    # starved of CPU on a loaded machine.
    assert 0.25 <= elapsed < SLOW_SECONDS / 3, elapsed
    assert servicer.ended_by_cancel.wait(5), "the server never saw the call end"
    assert servicer.started == 1


def test_an_event_already_set_sends_nothing(server: tuple[SlowServicer, str]) -> None:
    servicer, target = server
    stop = threading.Event()
    stop.set()
    with LoaderClient(target) as client, pytest.raises(LoaderError) as caught:
        client.create_splits("d", "main", parts={"train": 1}, cancel=stop)
    assert caught.value.code == grpc.StatusCode.CANCELLED
    assert servicer.started == 0


def test_a_call_with_an_unset_event_returns_its_answer(server: tuple[SlowServicer, str]) -> None:
    servicer, target = server
    servicer.fast = True
    with LoaderClient(target) as client:
        description = client.describe_dataset("photos", cancel=threading.Event())
    assert description.dataset == "photos"
    assert servicer.started == 1


def test_the_timeout_still_applies_with_a_cancel_event(server: tuple[SlowServicer, str]) -> None:
    _, target = server
    with LoaderClient(target) as client, pytest.raises(LoaderError) as caught:
        client.list_splits("d", timeout=0.3, cancel=threading.Event())
    assert caught.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
