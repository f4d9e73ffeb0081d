"""Lets gRPC's core threads wind down before this process forks (DataLoader workers).

A channel that closed a moment ago leaves gRPC's threads (``event_engine``,
``grpc_global_timer``, ``lifeguard``) running for a few milliseconds. A fork inside that window
copies locks those threads hold into a child that does not have them, and a worker that then
makes its own channel can wait forever, with its DataLoader waiting on it (seen in this
project's tests: a stream read in the test process, then a DataLoader with two workers, now and
then never yielding). So, before every fork of a process that uses LoaderDataset, when no
LoaderClient of the process is open and one closed within the last ten seconds, this waits (at
most two seconds) until those threads are gone; threads of another gRPC user in the process
are not waited for. With a client open, gRPC's threads stay: the fork goes ahead at once, with
a warning (once per process) that names the open clients, since a channel must not be carried
across fork in any case. LoaderDataset closes the client of a pass iterated in the trainer's
own process when the pass ends, so only the user's own open clients can do that.
"""

from __future__ import annotations

import os
import time
import warnings

from .. import client as _client

# Thread names (Linux `comm`, 15 characters) of gRPC core's own threads.
_GRPC_THREADS = ("event_engine", "grpc_global_tim", "lifeguard", "default-executo",
                 "resolver-execut", "timer_manager", "grpc_")
_WAIT_SECONDS = 2.0
"""Threads end within milliseconds of the last channel's close on an idle machine; the bound
leaves room for a busy one (CI runs the TypeScript tests beside the Python ones)."""
_RECENT_SECONDS = 10.0
"""How long after this process closed a LoaderClient a fork still waits for gRPC's threads."""
_warned = False


def _warn_once(clients: int) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(
            f"this process forks with {clients} LoaderClient(s) open: "
            "gRPC does not survive fork, and a worker forked now can wait forever. Close "
            "clients (use `with LoaderClient(...)`) before iterating a DataLoader with workers, "
            "or give the DataLoader multiprocessing_context='forkserver'",
            RuntimeWarning,
            stacklevel=2,
        )


def grpc_threads() -> list[str]:
    """Names of this process's gRPC core threads (Linux; empty elsewhere)."""
    names = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return []
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                name = f.read().strip()
        except OSError:  # a thread that ended meanwhile
            continue
        if name.startswith(_GRPC_THREADS):
            names.append(name)
    return names


def wait_for_grpc_threads(timeout: float = _WAIT_SECONDS) -> bool:
    """Waits until this process has no gRPC core thread, at most ``timeout`` seconds, unless a
    LoaderClient of the process is open. True when none is left."""
    if _client.open_clients() > 0:
        left = grpc_threads()
        if left:
            _warn_once(_client.open_clients())
        return not left
    since = _client.seconds_since_a_client_closed()
    if since is None or since > _RECENT_SECONDS:
        # gRPC threads with no client of ours closed lately belong to another user of gRPC in
        # the process (a cloud SDK, Ray): nothing of ours to wait out, and no reason to delay
        # every fork by the bound.
        return not grpc_threads()
    deadline = time.monotonic() + timeout
    while grpc_threads():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.002)
    return True


_registered = False


def register() -> None:
    """Runs :func:`wait_for_grpc_threads` before every fork of this process (once)."""
    global _registered
    if not _registered and hasattr(os, "register_at_fork"):
        os.register_at_fork(before=wait_for_grpc_threads)
        _registered = True
