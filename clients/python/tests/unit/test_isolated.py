"""call_in_child: the call len() needs runs in a forked child, so gRPC never starts in the
process that forks DataLoader workers; answers and errors come back as if called here."""

from __future__ import annotations

import os
import threading
import time

import pytest

from scylla_loader import LoaderError
from scylla_loader.torch.isolated import call_in_child


def test_the_call_runs_in_another_process_and_its_answer_comes_back() -> None:
    here = os.getpid()
    secret = threading.Lock()  # something that would not pickle: fork needs no pickling
    assert call_in_child(lambda: (os.getpid(), secret.locked()))[1] is False
    assert call_in_child(os.getpid) != here


def test_an_error_is_raised_here_as_itself_or_as_its_text() -> None:
    def fails() -> None:
        raise ValueError("split set main of mnist has no part 'trian'")

    with pytest.raises(ValueError, match="has no part 'trian'"):
        call_in_child(fails)

    class Local(Exception):  # a class the parent cannot find by name: sent as text
        pass

    def fails_oddly() -> None:
        raise Local("odd")

    with pytest.raises(RuntimeError, match="Local: odd"):
        call_in_child(fails_oddly)


def test_a_loader_error_keeps_its_code() -> None:
    import grpc

    def refused() -> None:
        raise LoaderError("GetSplit", "loader:50051", grpc.StatusCode.NOT_FOUND, "dataset mnst does not exist")

    with pytest.raises(LoaderError) as raised:
        call_in_child(refused)
    assert raised.value.code == grpc.StatusCode.NOT_FOUND
    assert str(raised.value) == "GetSplit on loader:50051 NOT_FOUND: dataset mnst does not exist"


def test_a_child_that_dies_or_hangs_is_an_error_not_a_wait() -> None:
    with pytest.raises(RuntimeError, match="exited with code 3"):
        call_in_child(lambda: os._exit(3))
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="within 0.5 s"):
        call_in_child(lambda: time.sleep(60), timeout=0.5)
    assert time.monotonic() - started < 10
