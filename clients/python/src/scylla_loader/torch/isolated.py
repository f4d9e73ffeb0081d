"""Runs a gRPC call for a process that will fork DataLoader workers, without starting gRPC in
that process.

gRPC's core keeps threads and locks of its own for a while after a channel closes (its threads
were measured to outlive ``close()`` by a few milliseconds here). A ``fork()`` in that window
copies locks held by threads that do not exist in the child, and a worker that then opens its
own channel can wait on them forever, with its DataLoader waiting on the worker. Lightning
and the Hugging Face Trainer call ``len(dataset)`` and start the workers right after, so a
call made for ``len()`` runs in a short-lived child process instead: forked from this process
before any gRPC object exists here (a token function or TLS options need no pickling), it
makes the call, sends back the answer (or the exception) and exits. Its channel keeps its
connections to itself (LoaderDataset._new_client): where this process has a channel open to
the same loader, a child taking that connection from grpc's process-wide pool fails.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import TypeVar

T = TypeVar("T")


def call_in_child(fn: Callable[[], T], timeout: float = 120.0) -> T:
    """``fn()``, run in a forked child process; its exception, if any, is raised here (as
    itself when it pickles, else as a RuntimeError with its text), and a TimeoutError when it
    has not answered within ``timeout`` seconds (the child is then killed). Runs ``fn`` in
    this process where fork is not available, or when this process is itself a daemonic one
    (a DataLoader worker), which may not have children."""
    if "fork" not in multiprocessing.get_all_start_methods() or multiprocessing.current_process().daemon:
        return fn()
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_run, args=(fn, send), name="scylla-loader-query", daemon=True)
    child.start()
    send.close()
    try:
        if not receive.poll(timeout):
            child.kill()
            raise TimeoutError(f"the loader did not answer within {timeout:g} s")
        try:
            ok, value = pickle.loads(receive.recv_bytes())
        except EOFError:
            child.join()
            raise RuntimeError(
                f"the process that asked the loader exited with code {child.exitcode} before it answered"
            ) from None
    finally:
        receive.close()
        child.join()
    if ok:
        return value  # type: ignore[no-any-return]
    raise value


def _run(fn: Callable[[], object], send: Connection) -> None:
    try:
        answer: tuple[bool, object] = (True, fn())
    except BaseException as error:  # noqa: BLE001 - handed to the parent, which raises it
        answer = (False, error)
    try:
        payload = pickle.dumps(answer)
        pickle.loads(payload)  # an exception whose class cannot be rebuilt goes as its text
    except Exception:  # noqa: BLE001
        failed = answer[1]
        answer = (False, RuntimeError(f"{type(failed).__name__}: {failed}"))
        payload = pickle.dumps(answer)
    send.send_bytes(payload)
    send.close()
    # Leave without running this process's exit handlers (they belong to the parent).
    os._exit(0)
