"""The client of a scylla-loader server."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from .backoff import backoff_delay
from .batch import Batch, decode_batch
from .channel_options import (
    DEFAULT_FLOW_CONTROL_WINDOW,
    DEFAULT_MAX_RECEIVE_MESSAGE_LENGTH,
    channel_options,
)
from .descriptions import (
    ClassTargets,
    DatasetDescription,
    SplitFilter,
    SplitSet,
    build_create_splits_request,
    to_dataset_description,
    to_split_set,
)
from .errors import LoaderError, from_rpc_error
from .ledger import Ledger
from .ingest import (
    DEFAULT_MAX_UNACKNOWLEDGED,
    DEFAULT_SAMPLES_PER_REQUEST,
    BadSamples,
    IngestProgress,
    IngestSample,
    IngestSource,
    IngestSummary,
)
from .ingest_call import PATH as INGEST_PATH
from .ingest_call import IngestRun
from .request import (
    MissingSamplePolicy,
    Ordering,
    Replay,
    ShardRule,
    ShuffleMode,
    build_request,
)
from .retry import ReconnectPolicy, is_retryable
from .security import TlsOptions, TokenSource, security
from .source import SourceLike
from .transform import Transform
from .v1 import loader_pb2, loader_pb2_grpc

log = logging.getLogger("scylla_loader")

CANCEL_POLL_SECONDS = 0.05
"""How often a unary call with a ``cancel`` event looks at it: the most a cancel waits."""


@dataclass(frozen=True)
class ReconnectInfo:
    """What ``on_reconnect`` is told before a stream is resumed."""

    attempt: int
    """Attempt number since the last batch received, from 1."""
    code: grpc.StatusCode
    """Status that broke the stream."""
    details: str
    delay: float
    """Seconds to wait before the new call."""


class BatchStream:
    """The batches of one :meth:`LoaderClient.stream_batches` call: iterate it once.

    The first call starts when iteration starts. ``cancel()`` (from any thread) cancels the
    call in progress and any wait between attempts; the iteration then raises a
    :class:`LoaderError` with code CANCELLED. Leaving the loop early (``break``, an exception,
    ``close()``) cancels the call too, so the server sees a cancel and no call leaks.
    """

    def __init__(
        self,
        client: LoaderClient,
        request: loader_pb2.StreamBatchesRequest,
        deadline: float | None,
        on_reconnect: Callable[[ReconnectInfo], None] | None,
    ) -> None:
        self._client = client
        self._request = request
        self._deadline = deadline
        self._on_reconnect = on_reconnect
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._call: Any = None
        self._iterator = self._run()
        self.reconnects = 0
        """Reconnections made so far."""

    def __iter__(self) -> Iterator[Batch]:
        return self

    def __next__(self) -> Batch:
        return next(self._iterator)

    def cancel(self) -> None:
        """Cancels the stream; safe from any thread and more than once."""
        self._cancelled.set()
        with self._lock:
            call = self._call
        if call is not None:
            call.cancel()

    def close(self) -> None:
        """Stops the stream and cancels its call."""
        self._iterator.close()

    def _cancelled_error(self) -> LoaderError:
        return LoaderError(
            "StreamBatches", self._client.target, grpc.StatusCode.CANCELLED, "cancelled by the caller"
        )

    def _run(self) -> Generator[Batch, None, None]:
        client = self._client
        policy = client.reconnect
        request = self._request
        failures = 0
        # Until a first batch arrives, a failing call is a loader not (yet) reached, not a
        # stream to resume: it ends after the client's connect_timeout, naming the address.
        connected = False
        started = time.monotonic()
        while True:
            if self._cancelled.is_set():
                raise self._cancelled_error()
            timeout = None
            if self._deadline is not None:
                timeout = max(0.0, self._deadline - time.monotonic())
            call = client._stub.StreamBatches(request, timeout=timeout)
            with self._lock:
                self._call = call
            if self._cancelled.is_set():
                call.cancel()
            try:
                for response in call:
                    batch = decode_batch(
                        response.batch, "StreamBatches", client.target, len(request.sources)
                    )
                    failures = 0
                    connected = True
                    request = _with_token(request, batch.resume_token)
                    yield batch
                return
            except grpc.RpcError as caught:
                if self._cancelled.is_set():
                    raise self._cancelled_error() from None
                error = from_rpc_error(caught, "StreamBatches", client.target)
                if not is_retryable(error.code, error.details, policy.retry_on_resource_exhausted):
                    raise error from None
            finally:
                with self._lock:
                    self._call = None
                call.cancel()
            failures += 1
            if failures > policy.attempts:
                raise LoaderError(
                    error.method,
                    error.target,
                    error.code,
                    error.details,
                    note=f"gave up after {policy.attempts} reconnection attempts in a row",
                ) from error.__cause__
            delay = backoff_delay(failures, policy.initial_backoff, policy.max_backoff)
            if self._deadline is not None:
                # A deadline reached while waiting makes the next call fail with DEADLINE_EXCEEDED.
                delay = min(delay, max(0.0, self._deadline - time.monotonic()))
            if not connected:
                waited = time.monotonic() - started
                if waited + delay > client.connect_timeout:
                    raise LoaderError(
                        error.method, error.target, error.code, error.details,
                        note=f"no loader answered at {client.target} within "
                        f"{client.connect_timeout:g} s (connect_timeout): check that the loader "
                        "runs, that this host and port reach it, and that TLS is on at both ends "
                        "or at neither",
                    ) from error.__cause__
                log.warning(
                    "StreamBatches on %s: connecting (%s: %s); next attempt in %.2f s "
                    "(%.1f s of connect_timeout %g s spent)",
                    client.target, error.code.name, error.details, delay, waited,
                    client.connect_timeout,
                )
            else:
                log.warning(
                    "StreamBatches on %s broke (%s: %s); resuming from the last batch in "
                    "%.2f s (attempt %d of %d)",
                    client.target, error.code.name, error.details, delay, failures,
                    policy.attempts,
                )
            if self._on_reconnect is not None:
                self._on_reconnect(ReconnectInfo(failures, error.code, error.details, delay))
            self.reconnects += 1
            if self._cancelled.wait(delay):
                raise self._cancelled_error()


def _with_token(
    request: loader_pb2.StreamBatchesRequest, token: bytes
) -> loader_pb2.StreamBatchesRequest:
    copy = loader_pb2.StreamBatchesRequest()
    copy.CopyFrom(request)
    copy.resume_token = token
    # A skip applies once, where it was asked for: after a batch (perhaps in a later epoch) the
    # stream continues from that batch's token without it.
    copy.ClearField("skip_batches")
    return copy


class LoaderClient:
    """Client of a scylla-loader server (or a load balancer in front of replicas). One client
    holds one channel; share it between streams of one process and ``close()`` it (or use it as
    a context manager). Never carry a client across ``fork()``: make it in the child.

    Example::

        with LoaderClient("localhost:50051") as client:
            for batch in client.stream_batches("mnist", "main/train", batch_size=256, epochs=10):
                train_step(batch.samples, batch.labels)  # views into the message, no copies
                if batch.last_in_epoch:
                    save_checkpoint(batch.epoch, batch.resume_token)

    With TLS and a token (a loader run with ``--tls-cert`` and ``--auth-tokens``)::

        client = LoaderClient(
            "loader.ml.svc:50051",
            tls=TlsOptions(ca="/etc/loader-tls/ca.crt"),
            token=TokenFile("/var/run/secrets/loader/token"),  # read again at every call
        )

    Args:
        target: The server's ``host:port`` or any grpc target (``dns:///loader:50051``).
        tls: TLS to the server: a :class:`TlsOptions` (CA, client certificate and key for
            mTLS, name to verify) or ``True`` for the system's roots. Default: plain text.
        token: Bearer token sent as ``authorization: Bearer <token>`` with every call: the
            token, or a function returning it, called before every call (each reconnection
            of a stream included) so the token can rotate. Needs ``tls`` or ``credentials``
            (or ``insecure_token``): a token is never sent in the clear by accident.
        insecure_token: Send ``token`` over a plain-text channel, to a loader on this machine
            only (``localhost``, ``127.x``, ``[::1]``, a ``unix:`` socket; grpc refuses any
            other peer): for tests and the sidecar deployment.
        credentials: Other channel credentials (instead of ``tls``); ``token`` is added to
            them. Default plain-text HTTP/2.
        reconnect: How broken streams are resumed.
        connect_timeout: Seconds a stream tries to reach the loader before its first batch
            (a loader not running, a wrong address): then it fails with a LoaderError naming
            the address. Once a batch arrived, ``reconnect`` alone governs.
        flow_control_window: HTTP/2 window in bytes; at least bandwidth x round trip.
        max_receive_message_length: Largest response accepted, in bytes.
        keepalive_time: Seconds between HTTP/2 pings that detect a dead connection.
        keepalive_timeout: Seconds to wait for a ping's answer.
        channel_options: Further grpc channel options; they override the ones above.
    """

    def __init__(
        self,
        target: str,
        *,
        tls: TlsOptions | bool | None = None,
        token: TokenSource | None = None,
        insecure_token: bool = False,
        credentials: grpc.ChannelCredentials | None = None,
        reconnect: ReconnectPolicy = ReconnectPolicy(),
        connect_timeout: float = 10.0,
        flow_control_window: int = DEFAULT_FLOW_CONTROL_WINDOW,
        max_receive_message_length: int = DEFAULT_MAX_RECEIVE_MESSAGE_LENGTH,
        keepalive_time: float = 30.0,
        keepalive_timeout: float = 10.0,
        channel_options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        secured = security(
            target, tls=tls, token=token, insecure_token=insecure_token, credentials=credentials
        )
        if not connect_timeout > 0:
            raise ValueError(f"connect_timeout must be positive, got {connect_timeout}")
        self.target = target
        self.reconnect = reconnect
        self.connect_timeout = connect_timeout
        options = _channel_options(
            flow_control_window=flow_control_window,
            max_receive_message_length=max_receive_message_length,
            keepalive_time=keepalive_time,
            keepalive_timeout=keepalive_timeout,
            reconnect=reconnect,
            extra=(*secured.options, *channel_options),
        )
        if secured.credentials is None:
            self._channel = grpc.insecure_channel(target, options=options)
        else:
            self._channel = grpc.secure_channel(target, secured.credentials, options=options)
        self._stub = loader_pb2_grpc.LoaderServiceStub(self._channel)
        self._open = True
        self._opened_by = os.getpid()
        _count_open(+1)
        # Requests go out already serialized (ingest_call.py puts the target before the
        # first request of each call by concatenating serialized messages).
        self._ingest_samples: Any = self._channel.stream_stream(
            INGEST_PATH,
            request_serializer=None,
            response_deserializer=loader_pb2.IngestSamplesResponse.FromString,
        )

    def __enter__(self) -> LoaderClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the channel; calls in progress are cancelled."""
        self._channel.close()
        self._uncount()

    def __del__(self) -> None:
        # A client dropped without close() no longer counts as open (gRPC closes its channel
        # when the channel is collected).
        self._uncount()

    def _uncount(self) -> None:
        # Only the process that opened the client counted it: a client inherited through fork
        # and closed or dropped in the child leaves the child's count alone.
        if getattr(self, "_open", False):
            self._open = False
            if self._opened_by == os.getpid():
                _count_open(-1)
                _closed["at"] = time.monotonic()

    def stream_batches(
        self,
        dataset: str | None = None,
        split: str | None = None,
        *,
        sources: Iterable[SourceLike] | None = None,
        samples_per_epoch: int = 0,
        batch_size: int,
        seed: int = 0,
        first_epoch: int = 0,
        epochs: int = 1,
        rank: int = 0,
        world_size: int = 1,
        shard_rule: ShardRule | None = None,
        shuffle: ShuffleMode | None = None,
        drop_last: bool = False,
        ordering: Ordering | None = None,
        prefetch: int = 0,
        missing_sample_policy: MissingSamplePolicy | None = None,
        resume_token: bytes | None = None,
        transform: Transform | None = None,
        job_checkpoint: bytes | None = None,
        columns: Iterable[str] | None = None,
        job_id: str | None = None,
        skip_batches: tuple[int, int] | None = None,
        replay: Replay | None = None,
        timeout: float | None = None,
        on_reconnect: Callable[[ReconnectInfo], None] | None = None,
    ) -> BatchStream:
        """Streams one rank's batches of a split (``all``, ``set/part`` or ``set@version/part``),
        or of several datasets and splits mixed by weight (``sources``).

        - Resumption: when the stream breaks for a reason a new call may not meet again
          (UNAVAILABLE: a dropped connection, a killed or restarting loader; a CANCELLED the
          client did not cause; a transport-level RST_STREAM; RESOURCE_EXHAUSTED unless turned
          off), the same request is sent again with the resume token of the last batch
          yielded, after an exponential backoff with jitter, so every batch is yielded exactly
          once. After ``reconnect.attempts`` failures in a row without a batch, the last error
          is raised (its message says so).
        - Errors: :class:`LoaderError` with the status (INVALID_ARGUMENT, NOT_FOUND, DATA_LOSS,
          DEADLINE_EXCEEDED...); DATA_LOSS also for a batch whose sizes do not add up.
          UNAUTHENTICATED (no, unknown or failed token) and PERMISSION_DENIED (a call or
          dataset outside the token's grant) are raised at once, never retried.
        - ``timeout``: seconds for the whole stream, reconnections included.
        - ``resume_token``: a batch's token from an earlier stream with the same fields: the
          stream continues right after that batch (e.g. after the trainer restarted).
        - ``transform``: a :class:`Transform` has the server decode and augment each sample;
          with its ``raw`` output every batch is one ``uint8`` tensor (:meth:`Batch.tensor`,
          :meth:`Batch.array`), shape (samples, height, width, channels). Its random choices
          depend on (seed, epoch, sample id) only, so a resumed stream continues with the
          same pixels.
        - ``job_checkpoint``: the tokens of every rank of the same job merged by
          :func:`merge_resume_tokens`, taken at any world size: this stream continues that
          epoch as rank ``rank`` of ``world_size`` with a share of exactly the samples no old
          rank delivered, then later epochs in full. While that epoch lasts, pass it again with
          this rank's ``resume_token`` (reconnections here do so by themselves).
        - ``columns``: metadata columns each batch carries (:attr:`Batch.columns`, by name):
          any typed column of the dataset (``describe_dataset().columns``) and
          ``"source_key"``. In a mixture a source whose dataset lacks one gives nulls; a column
          no source has is INVALID_ARGUMENT. Columns change nothing about which samples a
          batch holds: a resume token works with other columns.
        - ``job_id``: names the training job this stream belongs to (letters, digits, ``_``,
          ``-``, ``.``, ``:`` and ``/``, 1 to 128 characters; a ValueError otherwise), the same
          for every rank and worker of the job: the loader then records each batch in the
          job's training ledger before sending it (read it with :meth:`ledger`).
          Reconnections send the same name. A name already recorded for other job fields
          (dataset, split, seed, batch size, rules, transform) is FAILED_PRECONDITION.
        - ``skip_batches=(first, last)``: with ``job_id`` and ``resume_token``, leave out the
          samples of recorded batches ``first`` to ``last`` of the token's rank and epoch
          (e.g. the batches after a checkpoint that led to a loss spike); ``first`` must be
          the batch right after the token's (its ``index + 1``). The epoch goes on without
          exactly their samples, every other remaining sample once, and its next batch is
          ``last + 1``; the ledger keeps them listed, ``skipped``. A reconnection before the
          first batch sends the skip again; one after it does not (in a later epoch the same
          range would name other batches). A batch of the range
          the ledger does not hold, or another ``first``, is INVALID_ARGUMENT.
        - ``replay=Replay(epoch, rank, first, last)``: with ``job_id``, stream a recorded
          range of the job again, for debugging: the same batches with the same ids in the
          same order, ``index`` and ``resume_token``, and with the job's transform the same
          pixels. Every other argument must repeat the job's (dataset or sources, split,
          batch size, seed, rules, transform); ``rank``, ``world_size`` and ``epochs`` are the
          replay's. Nothing is recorded. A reconnection continues after the last batch
          received, as any stream.
        - Backpressure: a message is read only when the loop asks for the next batch; the
          HTTP/2 window holds the server back meanwhile.
        - ``sources`` (instead of ``dataset`` and ``split``): a mixed stream, e.g.
          ``sources=[Source("web", "main/train", 5), Source("books", "all", 3),
          Source("code", "all", 2, repeat=True)]``: each :class:`Source` is a split with a
          weight, and every window of the mixed epoch holds the weights (here 50%, 30%, 20%).
          ``samples_per_epoch`` sets the mixed epoch's length; 0 ends it when the source with
          the largest weight per sample has delivered each of its samples once (the others
          are sub-sampled, each epoch taking the next slice of their permutation). A source
          whose share is larger than itself needs ``repeat=True``. Each batch's
          ``source_indexes`` says which source every sample came from; its labels are its
          source's (integers, blobs or none). Seeds, sharding, resume tokens and job
          checkpoints work as for one split.

        Invalid values raise a ValueError here, at once: dataset and split together with
        sources (or neither), no sources or more than 64, a source with an empty dataset or
        split or a weight that is not finite and positive, ``samples_per_epoch`` above
        2^32 - 1 (the message names the source as the server would: ``source 2 (dataset
        "code", split "all"): ...``). Sources the server refuses (a dataset or split that does
        not exist: NOT_FOUND; a share larger than the source without ``repeat``:
        INVALID_ARGUMENT) are a :class:`LoaderError` whose details name the source.
        """
        request = build_request(
            dataset=dataset,
            split=split,
            sources=sources,
            samples_per_epoch=samples_per_epoch,
            batch_size=batch_size,
            seed=seed,
            first_epoch=first_epoch,
            epochs=epochs,
            rank=rank,
            world_size=world_size,
            shard_rule=shard_rule,
            shuffle=shuffle,
            drop_last=drop_last,
            ordering=ordering,
            prefetch=prefetch,
            missing_sample_policy=missing_sample_policy,
            resume_token=resume_token,
            transform=transform,
            job_checkpoint=job_checkpoint,
            columns=columns,
            job_id=job_id,
            skip_batches=skip_batches,
            replay=replay,
        )
        deadline = None if timeout is None else time.monotonic() + timeout
        return BatchStream(self, request, deadline, on_reconnect)

    def ledger(self, job_id: str) -> Ledger:
        """The training ledger of job ``job_id`` (the ``job_id`` its streams named): its
        batches (:meth:`Ledger.batches`, :meth:`Ledger.batch`) and the appearances of a
        sample (:meth:`Ledger.find`), each read with a GetLedger call on this client's channel
        with its token. A name outside the job id rule is a ValueError here; an unknown job is
        NOT_FOUND at the first read."""
        return Ledger(
            job_id,
            self.target,
            lambda request, timeout, cancel: self._unary(
                "GetLedger", self._stub.GetLedger, request, timeout, cancel
            ),
        )

    def describe_dataset(
        self,
        dataset: str,
        *,
        timeout: float | None = None,
        cancel: threading.Event | None = None,
    ) -> DatasetDescription:
        """Sample count, bytes, classes, metadata columns and splits of a dataset.

        ``timeout`` (seconds) and ``cancel`` work as in :meth:`create_splits`.

        Raises:
            LoaderError: NOT_FOUND for an unknown dataset; CANCELLED when ``cancel`` was set;
                the call's status otherwise.
        """
        response = self._unary(
            "DescribeDataset",
            self._stub.DescribeDataset,
            loader_pb2.DescribeDatasetRequest(dataset=dataset),
            timeout,
            cancel,
        )
        return to_dataset_description(response)

    def create_splits(
        self,
        dataset: str,
        name: str,
        *,
        parts: Mapping[str, float] | None = None,
        folds: int = 0,
        group_by: str | Sequence[str] = (),
        class_targets: ClassTargets | None = None,
        max_total: int = 0,
        filters: Sequence[SplitFilter] = (),
        seed: int = 0,
        new_version: bool = False,
        allow_shortfall: bool = False,
        timeout: float | None = 300.0,
        cancel: threading.Event | None = None,
    ) -> SplitSet:
        """Makes a split set from the dataset's metadata and stores it: named parts with weights
        (``{"train": 8, "val": 1, "test": 1}``) or ``folds``; stream its parts as
        ``<name>/<part>``. The server reads the whole metadata table, hence the long default
        timeout.

        Cancellation: the call is cancelled (the server sees a cancel) within
        ``CANCEL_POLL_SECONDS`` of ``cancel.set()`` from any thread, and this method then
        raises ``LoaderError`` CANCELLED, like ``BatchStream.cancel()`` for a stream. An event
        already set sends nothing. A split set whose creation the server had already finished
        stays stored: look with :meth:`get_split`. Example::

            stop = threading.Event()
            threading.Timer(10, stop.set).start()     # or a signal handler, a UI button...
            client.create_splits("photos", "main", parts={"train": 9, "val": 1}, cancel=stop)

        Raises:
            LoaderError: ALREADY_EXISTS when the name exists (set ``new_version``),
                INVALID_ARGUMENT for bad parameters or unmeetable targets, NOT_FOUND for an
                unknown dataset, DEADLINE_EXCEEDED after ``timeout`` seconds, CANCELLED when
                ``cancel`` was set.
        """
        request = build_create_splits_request(
            dataset=dataset,
            name=name,
            parts=parts,
            folds=folds,
            group_by=group_by,
            class_targets=class_targets,
            max_total=max_total,
            filters=filters,
            seed=seed,
            new_version=new_version,
            allow_shortfall=allow_shortfall,
        )
        response = self._unary("CreateSplits", self._stub.CreateSplits, request, timeout, cancel)
        return to_split_set(response.split_set)

    def list_splits(
        self,
        dataset: str,
        *,
        timeout: float | None = None,
        cancel: threading.Event | None = None,
    ) -> list[SplitSet]:
        """A dataset's split sets, every version, by name and newest version first.

        ``timeout`` (seconds) and ``cancel`` work as in :meth:`create_splits`.
        """
        response = self._unary(
            "ListSplits",
            self._stub.ListSplits,
            loader_pb2.ListSplitsRequest(dataset=dataset),
            timeout,
            cancel,
        )
        return [to_split_set(s) for s in response.split_sets]

    def get_split(
        self,
        dataset: str,
        name: str,
        *,
        version: int = 0,
        timeout: float | None = None,
        cancel: threading.Event | None = None,
    ) -> SplitSet:
        """One split set: its latest version unless ``version`` is given.

        ``timeout`` (seconds) and ``cancel`` work as in :meth:`create_splits`.

        Raises:
            LoaderError: NOT_FOUND for an unknown dataset, set or version.
        """
        request = loader_pb2.GetSplitRequest(dataset=dataset, name=name, version=version)
        response = self._unary("GetSplit", self._stub.GetSplit, request, timeout, cancel)
        return to_split_set(response.split_set)

    def ingest(
        self,
        dataset: str,
        samples: Iterable[IngestSample | Mapping[str, Any]] | IngestSource,
        *,
        label_names: Sequence[str] | None = None,
        columns: Mapping[str, str] | None = None,
        bad_samples: BadSamples = "fail",
        source: str | None = None,
        samples_per_request: int | None = None,
        max_unacknowledged: int = DEFAULT_MAX_UNACKNOWLEDGED,
        on_progress: Callable[[IngestProgress], None] | None = None,
        timeout: float | None = None,
    ) -> IngestSummary:
        """Writes samples into ``dataset`` through the loader (the dataset is made when
        absent), with no database credentials here. Needs role writer or admin when the
        loader checks tokens.

        ``samples``: any iterable of :class:`IngestSample` or of dicts with its fields
        (``source_key``, ``data``, ``label``, ``label_blob``, ``metadata``), read once and
        lazily, or an :class:`IngestSource` from :mod:`scylla_loader.ingest_sources` (whose
        ``label_names``, ``columns`` and ``source`` are used unless given here). A sample's
        id derives from its source key, and a stored sample is never written again: running
        the same ingest twice stores each sample once (the second run counts them in
        ``already_present``).

        - ``label_names``: class names (label i is ``label_names[i]``), fixed by the first
          ingest of the dataset that gives them.
        - ``columns``: metadata columns and types (``text``, ``int``, ``bigint``, ``double``,
          ``boolean``); inferred when absent from the metadata of the samples of the first
          request (``str`` text, ``bool`` boolean, ``int`` bigint, ``float`` double, numpy
          scalars alike). A later sample with a key outside the columns, or a value of the
          wrong type, is a bad sample (see ``bad_samples``).
        - ``bad_samples``: ``"fail"`` ends the ingest with INVALID_ARGUMENT naming the first
          sample that breaks the loader's rules (empty, over 15 MiB, no label nor label
          blob, a label outside the class names, a metadata key that is no column or a value
          of the wrong type);
          ``"skip"`` leaves such samples out and lists them in ``skipped_samples``.
        - ``source``: recorded with the dataset's sources (default ``"python"``).
        - ``samples_per_request``: samples per request (default 64), each request at most
          4 MiB unless one sample is larger.
        - Backpressure: at most ``max_unacknowledged`` requests are in flight; the iterable is
          not read further until the loader acknowledges one (a request is acknowledged once
          each of its samples is stored, found stored, or skipped).
        - Resumption: when the call breaks for a reason a new call may not meet again (the
          same statuses as :meth:`stream_batches`), a new call sends again every request not
          yet acknowledged, after the client's backoff, at most ``reconnect.attempts`` times
          in a row without an acknowledgement. Samples written by a call that broke before
          acknowledging them count as ``already_present``.
        - ``on_progress``: called in this thread after each acknowledged request with the
          totals so far.
        - ``timeout``: seconds for the whole ingest, reconnections included.

        An exception of the iterable (Ctrl-C included) or of ``on_progress`` cancels the call
        and propagates; the acknowledged samples are stored, and running the ingest again
        completes it.

        Raises:
            LoaderError: INVALID_ARGUMENT (a bad sample under ``"fail"``, other class names
                than the dataset's, a bad column), PERMISSION_DENIED (a reader token),
                UNAUTHENTICATED, DEADLINE_EXCEEDED, or the last error after the reconnection
                attempts.
            ValueError, TypeError: a sample that cannot be sent (missing fields, data that
                is not bytes, a label outside int32, a metadata value that is no scalar),
                bad options.
        """
        names = label_names
        if isinstance(samples, IngestSource):
            if names is None and samples.label_names is not None:
                names = samples.label_names
            if columns is None and samples.columns is not None:
                columns = samples.columns
            if source is None:
                source = samples.source
        run = IngestRun(
            open_call=lambda requests, timeout: self._ingest_samples(requests, timeout=timeout),
            target=self.target,
            policy=self.reconnect,
            dataset=dataset,
            samples=samples,
            label_names=names or (),
            columns=columns,
            bad_samples=bad_samples,
            source=source or "python",
            samples_per_request=samples_per_request or DEFAULT_SAMPLES_PER_REQUEST,
            max_unacknowledged=max_unacknowledged,
            on_progress=on_progress,
            timeout=timeout,
        )
        return run.run()

    def _unary(
        self,
        method: str,
        fn: Any,
        request: Any,
        timeout: float | None,
        cancel: threading.Event | None,
    ) -> Any:
        if cancel is None:
            try:
                return fn(request, timeout=timeout)
            except grpc.RpcError as caught:
                raise from_rpc_error(caught, method, self.target) from None
        if cancel.is_set():
            raise _cancelled(method, self.target)
        # A blocking call cannot be interrupted from another thread; grpc's future can, and a
        # threading.Event has no callback, so the event is polled while the call runs.
        future = fn.future(request, timeout=timeout)
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        try:
            while not done.wait(CANCEL_POLL_SECONDS):
                if cancel.is_set():
                    future.cancel()
                    raise _cancelled(method, self.target)
            try:
                return future.result()
            except grpc.RpcError as caught:
                raise from_rpc_error(caught, method, self.target) from None
        finally:
            # KeyboardInterrupt or any other exit while waiting: the server must not keep
            # working for a caller that has gone.
            if not future.done():
                future.cancel()


def _cancelled(method: str, target: str) -> LoaderError:
    return LoaderError(method, target, grpc.StatusCode.CANCELLED, "cancelled by the caller")


_channel_options = channel_options

# LoaderClients of this process not yet closed (a child of fork starts at none: the parent's
# are not its own). torch/forksafe.py reads it before a fork.
_open_clients = {"pid": os.getpid(), "count": 0}


def _count_open(change: int) -> None:
    if _open_clients["pid"] != os.getpid():
        _open_clients.update(pid=os.getpid(), count=0)
    _open_clients["count"] = max(0, _open_clients["count"] + change)


def open_clients() -> int:
    """LoaderClients made by this process and not closed yet."""
    return _open_clients["count"] if _open_clients["pid"] == os.getpid() else 0


# When this process last closed (or dropped) a LoaderClient of its own (time.monotonic()).
_closed: dict[str, float | None] = {"at": None}


def seconds_since_a_client_closed() -> float | None:
    """Seconds since this process last closed a LoaderClient it made; None: never."""
    at = _closed["at"]
    return None if at is None else time.monotonic() - at
