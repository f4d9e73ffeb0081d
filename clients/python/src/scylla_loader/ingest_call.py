"""The IngestSamples call of :meth:`LoaderClient.ingest`: requests sent through a bidirectional
stream, at most ``max_unacknowledged`` in flight, and after a break a new call that sends again
every request not acknowledged (writes are idempotent, so the result is exact).

Threads: the caller's thread reads the caller's samples, builds and queues requests, and
handles the responses (so the caller's exceptions, Ctrl-C included, surface where they
belong); grpc's own thread takes requests from a queue; one reader thread per call moves
responses and the final status to the caller's thread.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import grpc

from .backoff import backoff_delay
from .errors import LoaderError, from_rpc_error
from .ingest import (
    DEFAULT_REQUEST_BYTES,
    IngestProgress,
    IngestSample,
    IngestSummary,
    PendingRequest,
    Tally,
    check_columns,
    cut_requests,
    encode_sample,
    encode_target,
    infer_columns,
    to_sample,
)
from .retry import ReconnectPolicy, is_retryable
from .v1 import loader_pb2

log = logging.getLogger("scylla_loader")

METHOD = "IngestSamples"
PATH = "/scylla_loader.v1.LoaderService/IngestSamples"

_END = object()
"""In the request queue: half-close. In the response queue: the call ended with OK."""


def _requests(outbox: queue.Queue[Any]) -> Iterator[bytes]:
    while True:
        item = outbox.get()
        if item is _END:
            return
        yield item


def _read(call: Any, inbox: queue.Queue[Any]) -> None:
    try:
        for response in call:
            inbox.put(response)
        inbox.put(_END)
    except grpc.RpcError as error:
        inbox.put(error)
    except BaseException as error:  # noqa: BLE001 - handed to the caller's thread
        inbox.put(error)


class IngestRun:
    """One :meth:`LoaderClient.ingest`; :meth:`run` does it once."""

    def __init__(
        self,
        *,
        open_call: Callable[[Iterator[bytes], float | None], Any],
        target: str,
        policy: ReconnectPolicy,
        dataset: str,
        samples: Iterable[IngestSample | Mapping[str, Any]],
        label_names: Sequence[str],
        columns: Mapping[str, str] | None,
        bad_samples: str,
        source: str,
        samples_per_request: int,
        max_request_bytes: int = DEFAULT_REQUEST_BYTES,
        max_unacknowledged: int,
        on_progress: Callable[[IngestProgress], None] | None,
        timeout: float | None,
    ) -> None:
        if not dataset:
            raise ValueError("dataset must be a non-empty name")
        if max_unacknowledged < 1:
            raise ValueError(f"max_unacknowledged must be 1 or more, got {max_unacknowledged}")
        if samples_per_request < 1:
            raise ValueError(f"samples_per_request must be 1 or more, got {samples_per_request}")
        if isinstance(label_names, str) or not all(isinstance(n, str) for n in label_names):
            raise ValueError("label_names must be a sequence of str")
        self._open_call = open_call
        self._target = target
        self._policy = policy
        self._dataset = dataset
        self._samples = samples
        self._label_names = list(label_names)
        self._columns = None if columns is None else check_columns(columns)
        self._bad_samples = bad_samples
        self._source = source
        self._samples_per_request = samples_per_request
        self._max_request_bytes = max_request_bytes
        self._max_unacknowledged = max_unacknowledged
        self._on_progress = on_progress
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._target_bytes = b""
        # Checked at once (ValueError for a bad policy), before any sample is read.
        encode_target(dataset, self._label_names, self._columns or {}, bad_samples, source)

    def _request_stream(self) -> Iterator[PendingRequest]:
        """The caller's samples as requests, read lazily. Before the first request, the
        columns are fixed (given, or inferred from the samples of the first request) and the
        target encoded."""
        items = enumerate(iter(self._samples))
        columns = self._columns
        head: list[IngestSample] = []
        if columns is None:
            size = 0
            for index, item in items:
                sample = to_sample(item, index)
                head.append(sample)
                size += len(sample.data) + len(sample.label_blob or b"")
                if len(head) >= self._samples_per_request or size >= self._max_request_bytes:
                    break
            columns = infer_columns(head)
        self._target_bytes = encode_target(
            self._dataset, self._label_names, columns, self._bad_samples, self._source
        )
        normalized = itertools.chain(head, (to_sample(item, index) for index, item in items))
        pieces = ((encode_sample(sample), 1) for sample in normalized)
        budget = max(1, self._max_request_bytes - len(self._target_bytes))
        yield from cut_requests(pieces, max_samples=self._samples_per_request, max_bytes=budget)

    def _remaining(self) -> float | None:
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - time.monotonic())

    def _protocol_error(self, message: str) -> LoaderError:
        return LoaderError(
            METHOD, self._target, grpc.StatusCode.INTERNAL, message,
            note="the client stopped the call: the loader's answers do not fit its requests",
        )

    def run(self) -> IngestSummary:
        policy = self._policy
        tally = Tally()
        requests = self._request_stream()
        exhausted = False
        failures = 0
        reconnects = 0
        resent = 0
        while True:
            tally.new_call()
            outbox: queue.Queue[Any] = queue.Queue()
            inbox: queue.Queue[Any] = queue.Queue()
            call = self._open_call(_requests(outbox), self._remaining())
            reader = threading.Thread(
                target=_read, args=(call, inbox), name="scylla-loader-ingest", daemon=True
            )
            reader.start()
            sent = 0
            closed = False
            finished = False

            def send(request: PendingRequest) -> None:
                nonlocal sent
                outbox.put(self._target_bytes + request.payload if sent == 0 else request.payload)
                sent += 1

            try:
                for unacknowledged in tally.pending:  # sent by the call that broke
                    send(unacknowledged)
                    if not unacknowledged.resent:
                        unacknowledged.resent = True
                        resent += 1
                while True:
                    if not exhausted and len(tally.pending) < self._max_unacknowledged:
                        try:
                            event = inbox.get_nowait()
                        except queue.Empty:
                            # Room in the window: read the caller's next samples.
                            following = next(requests, None)
                            if following is None:
                                exhausted = True
                            else:
                                tally.pending.append(following)
                                send(following)
                            continue
                    else:
                        if exhausted and not closed:
                            if sent == 0:
                                # Nothing to send again and nothing left: the target alone,
                                # so the call still names its dataset and ends with `done`.
                                empty = PendingRequest(b"", 0)
                                tally.pending.append(empty)
                                send(empty)
                            outbox.put(_END)
                            closed = True
                        event = inbox.get()
                    if isinstance(event, loader_pb2.IngestSamplesResponse):
                        try:
                            newly = tally.answer(event)
                        except ValueError as unfit:
                            raise self._protocol_error(str(unfit)) from None
                        if newly:
                            failures = 0
                            if self._on_progress is not None:
                                self._on_progress(tally.progress())
                        if event.done:
                            if tally.pending or not closed:
                                raise self._protocol_error(
                                    "the loader said done before every request was answered"
                                )
                            finished = True
                            return tally.summary(event.dataset_samples, reconnects, resent)
                    elif event is _END:
                        raise self._protocol_error("the call ended without its done response")
                    elif isinstance(event, grpc.RpcError):
                        error = from_rpc_error(event, METHOD, self._target)
                        break
                    else:
                        raise event
            finally:
                if not finished:
                    call.cancel()
                outbox.put(_END)  # frees grpc's request thread if it waits for a request
            if not is_retryable(error.code, error.details, policy.retry_on_resource_exhausted):
                raise error from None
            failures += 1
            if failures > policy.attempts:
                raise LoaderError(
                    error.method, error.target, error.code, error.details,
                    note=f"gave up after {policy.attempts} reconnection attempts in a row",
                ) from error.__cause__
            delay = backoff_delay(failures, policy.initial_backoff, policy.max_backoff)
            remaining = self._remaining()
            if remaining is not None:
                delay = min(delay, remaining)
            log.warning(
                "IngestSamples on %s broke (%s: %s) with %d requests unacknowledged; sending "
                "them again in a new call in %.2f s (attempt %d of %d)",
                self._target, error.code.name, error.details, len(tally.pending), delay,
                failures, policy.attempts,
            )
            reconnects += 1
            time.sleep(delay)
