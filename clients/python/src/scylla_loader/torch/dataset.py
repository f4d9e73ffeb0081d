"""A PyTorch IterableDataset over a scylla-loader stream."""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal, TypeVar

import numpy as np
import torch
from torch.utils.data import IterableDataset, get_worker_info

from ..batch import Batch
from ..client import LoaderClient
from ..columns import validate_column_names
from ..request import Ordering, ShardRule, ShuffleMode, validate_job_id
from ..retry import ReconnectPolicy
from ..security import TlsOptions, TokenSource, check_security
from ..source import Source, SourceLike, stream_input
from ..transform import Transform
from .decode import DECODE_MODES, Decode, DecodeMode, collate
from .records import check_record_columns, record
from .forksafe import register as _register_fork_wait
from .isolated import call_in_child
from .length import batch_count, mixed_positions, shard_length, split_size
from .job_state import JOB_STATE_KIND, JOB_STATE_VERSION, find_worker_states, merge_states
from .sharding import resolve_rank, worker_shard

log = logging.getLogger("scylla_loader")

T = TypeVar("T")

RawLayout = Literal["NHWC", "NCHW"]
"""The shape of a raw server transform's batch tensor: ``NHWC`` as the server sends it, or
``NCHW``, a view of the same memory (``permute``; not contiguous, no copy)."""

STATE_VERSION = 1
# A channel whose connections are its own (grpc's `use_local_subchannel_pool`), never the
# parent's through fork: see LoaderDataset._new_client.
_OWN_SUBCHANNELS = ("grpc.use_local_subchannel_pool", 1)
_MAX_WORKERS = 512
"""DataLoader workers per dataset at most (each has its epoch pair in shared memory)."""
_register_fork_wait()  # DataLoader workers fork only once gRPC's threads are gone (forksafe.py)


class LoaderDataset(IterableDataset[tuple[Any, ...]]):
    """One data-parallel rank's batches of a split, as ``(images, labels)`` items: each item is
    one batch made by the server, so use it with ``DataLoader(dataset, batch_size=None, ...)``
    (a DataLoader that batches items fails at the first one, saying so).
    Instead of one dataset and split, ``sources=`` mixes several by weight (see Mixing).

    Sharding: data-parallel rank ``r`` of ``W`` (from ``process_group``, else ``rank`` and
    ``world_size``, else ``torch.distributed``'s global ones when initialised, else
    ``RANK``/``WORLD_SIZE``; see :func:`resolve_rank`) with ``n`` DataLoader workers: worker
    ``w`` streams as rank ``r * n + w`` of ``W * n``. Processes given the same data-parallel
    rank (tensor-parallel replicas) stream the same batches in the same order: when
    ``torch.distributed`` has more processes than data-parallel ranks, ``ordering`` is
    ``in-order`` (the default then; ``out-of-order`` is refused). ``shard_rule`` says how the split's N
    samples divide among those ``W * n`` streams:

    - ``pad`` (default): each stream gets ceil(N / (W n)) samples, up to W n - 1 of them
      repeated, so every rank takes the same number of steps (no DDP hang at an epoch's end);
    - ``uneven``: an exact partition (every sample once); streams differ by at most one
      sample, so ranks may differ by a step;
    - ``drop``: each stream gets floor(N / (W n)); up to W n - 1 samples are left out.

    Epochs: ``set_epoch(e)`` before iterating, as with ``DistributedSampler``; it reaches
    persistent workers too (the value lives in shared memory). Without it, each new iteration
    of a worker id (the main process counts as worker 0) streams the epoch after its previous
    one, with persistent and non-persistent workers alike (each worker id's next epoch lives in
    shared memory too, so new worker processes continue it).

    Length: ``len(dataset)`` is the items a DataLoader with ``num_workers`` (given here too)
    yields on this rank per epoch, by the shard rule, ``drop_last`` and the epoch's size
    (:meth:`epoch_size`, asked of the loader once).

    Server-side transforms: with ``server_transform=Transform(..., output="raw")`` the server
    decodes, resizes, crops and flips, and each item is ``(images, labels)`` with ``images``
    the batch's ``torch.uint8`` tensor of shape (N, H, W, C), made without a copy over the
    received bytes (:meth:`Batch.tensor`; with DataLoader workers, torch moves it into shared
    memory once to hand it over). It is read-only memory: never write it in place; convert
    out of place, e.g. ``x = images.to(device).permute(0, 3, 1, 2).float().div_(255)``.
    ``decode`` and ``transform`` do not apply then. A ``jpeg``/``webp`` output comes as each
    sample's bytes, decoded by ``decode`` as usual.

    Checkpoints: ``state_dict()``/``load_state_dict()`` hold the epoch and the resume token of
    the last batch delivered; torchdata's ``StatefulDataLoader`` keeps one per worker, and a
    job restored from it streams exactly the samples not yet delivered. A state taken after an
    epoch's last batch resumes with an empty rest of that epoch, then the next epoch in full.
    With a ``job_id``, :meth:`skip_batches` after loading a state leaves out the next batches
    the stream had delivered after it (a loss spike: go back to the checkpoint, skip what
    followed).

    Elastic checkpoints: :meth:`job_state` gathers the states of every worker of every rank
    (``torch.distributed.all_gather_object``) into one job state, the same on every rank;
    save it once. :meth:`load_job_state` continues it at any world size and worker count: the
    samples of the epoch no old worker delivered are re-sharded among the new ones, exactly
    once (``pad`` keeps equal step counts), then later epochs run in full.

    Mixing: ``LoaderDataset(target, sources=[Source("web", "main/train", 5), Source("books",
    "all", 3), Source("code", "all", 2, repeat=True)], samples_per_epoch=..., batch_size=...)``
    streams the sources mixed by weight (every window of the epoch holds 5:3:2) instead of
    one dataset and split. Workers, ranks, ``set_epoch``, ``state_dict``/``load_state_dict``
    and ``job_state``/``load_job_state`` work as for a split: the mixed epoch is one
    sequence of positions, sharded and resumed like a split's, and a checkpoint belongs to
    the same sources, weights and ``samples_per_epoch`` only. With ``with_sources=True``
    each item ends with an ``int64`` tensor of each sample's source (an index into
    ``sources``), e.g. to weight the loss or count samples per source. Labels are per
    source: a sample of a source without integer labels has label -1, and its label blob
    (``return_label_blobs=True``) is what its source stored.

    The gRPC channel is opened inside ``__iter__``, i.e. in the worker after its fork, never in
    the process that forks.

    Args:
        target: The loader's address, e.g. ``localhost:50051``.
        dataset: Dataset name (or ``sources``).
        split: ``all``, ``set/part`` or ``set@version/part`` (pin the version for a job).
        sources: Instead of ``dataset`` and ``split``: the sources of a mixed stream, each a
            :class:`~scylla_loader.Source` (dataset, split, weight, repeat), a ``(dataset,
            split[, weight[, repeat]])`` tuple or a mapping with those keys; checked here (a
            ValueError names the source).
        samples_per_epoch: With ``sources``: samples in a mixed epoch (all ranks and workers
            together); 0 ends the epoch when the source with the largest weight per sample
            delivered each of its samples once.
        with_sources: Items end with an ``int64`` tensor of each sample's source index (needs
            ``sources``); after the ids when ``return_ids`` is set too.
        batch_size: Samples per item.
        seed: Seed of the per-epoch permutation.
        decode: ``None`` (raw ``bytes`` per sample), ``"pil"`` or ``"torchvision"``.
        decode_mode: ``"RGB"`` or ``"L"``: decoded images are converted to 3 or 1 channels
            (grey, palette, CMYK, RGBA); ``"unchanged"``: as stored.
        transform: Applied to each decoded sample (or raw ``bytes``) before stacking.
        server_transform: A :class:`~scylla_loader.Transform` the server applies to each
            sample (see above); ``None``: samples as stored.
        raw_layout: With a raw ``server_transform``: ``"NHWC"`` as sent, or ``"NCHW"``, a
            view of the same bytes (``permute``; no copy, not contiguous).
        num_workers: The DataLoader's ``num_workers`` (0 without workers), which ``len()``
            needs; iterating under another count is a ValueError.
        rank: This process's data-parallel rank (with ``world_size``), honoured as given.
        world_size: The number of data-parallel ranks (with ``rank``).
        process_group: Instead of ``rank``/``world_size``: a ``torch.distributed`` group of one
            process per data-parallel rank; its rank and size are used, and :meth:`job_state`
            gathers over it.
        epoch: The first epoch (what ``set_epoch`` would set).
        return_ids: Items are ``(images, labels, ids)`` with the samples' UUID strings (for
            audits: exactly-once checks, error analysis).
        return_label_blobs: Items gain a list of each sample's label blob as ``bytes`` (a
            mask, a caption; ``b""`` for a sample without one), after the ids when
            ``return_ids`` is set too and before the source indexes of ``with_sources``.
        columns: Metadata columns of the dataset (and ``"source_key"``) each batch carries:
            items are then dicts (see ``as_dict``) with each column by its name: text as a
            list of ``str`` (``None`` for a null), numbers as tensors (``int64`` for int and
            bigint, ``float64``, ``bool``; a batch with a null in a number column has it as
            ``float64`` with NaN; a double column is always ``float64``). Not part of the
            stream's identity: a checkpoint resumes with other columns.
        job_id: The training job's name (letters, digits, ``_``, ``-``, ``.``, ``:`` and
            ``/``, 1 to 128 characters), the same on every rank: every stream (every rank and
            DataLoader worker, each its stream rank) names it, and the loader records each
            batch in the job's ledger (:meth:`LoaderClient.ledger`). It changes no batch, so
            it is not part of the stream's identity: states saved without one resume with
            one. It is kept in ``state_dict`` and :meth:`job_state`, and a state saved with a
            job id resumes only under that job id (a ValueError otherwise): continuing an
            epoch under another name, or none, would leave both ledgers with part of it.
        return_masks: Items are dicts (see ``as_dict``) with ``"mask"``: the batch's masks,
            ``uint8`` (N, H, W, 1), or (N, 1, H, W) with ``raw_layout="NCHW"``, each following
            its image through the server's crop, resize and flip. Needs a raw
            ``server_transform`` with ``masks=True``.
        as_dict: Items are dicts ``{"image", "label", "id"[, "source"][, <column>...]}``
            instead of tuples (implied by ``columns``); ``return_ids``,
            ``return_label_blobs`` and ``with_sources`` do not apply then (``source`` is there
            in a mixture, ``id`` always).
        tls: TLS to the loader, as for :class:`LoaderClient`; PEM file paths are read in each
            worker when its client is made (and checked here first).
        token: Bearer token or token function, as for :class:`LoaderClient`. With spawned
            workers a function must pickle: use :class:`~scylla_loader.TokenFile` or a
            module-level function, not a lambda.
        insecure_token: Send ``token`` in plain text to a loader on this machine (see
            :class:`LoaderClient`).
        client_options: Keyword arguments for :class:`LoaderClient` (e.g. ``keepalive_time``).
    """

    def __init__(
        self,
        target: str,
        dataset: str | None = None,
        split: str | None = None,
        *,
        sources: Iterable[SourceLike] | None = None,
        samples_per_epoch: int = 0,
        with_sources: bool = False,
        batch_size: int,
        seed: int = 0,
        shuffle: ShuffleMode | None = None,
        shard_rule: ShardRule = "pad",
        drop_last: bool = False,
        ordering: Ordering | None = None,
        prefetch: int = 0,
        decode: Decode | None = None,
        decode_mode: DecodeMode = "unchanged",
        transform: Callable[[Any], Any] | None = None,
        server_transform: Transform | None = None,
        raw_layout: RawLayout = "NHWC",
        num_workers: int | None = None,
        rank: int | None = None,
        world_size: int | None = None,
        process_group: Any = None,
        epoch: int = 0,
        return_ids: bool = False,
        return_label_blobs: bool = False,
        columns: Sequence[str] | None = None,
        job_id: str | None = None,
        return_masks: bool = False,
        as_dict: bool = False,
        reconnect: ReconnectPolicy = ReconnectPolicy(),
        tls: TlsOptions | bool | None = None,
        token: TokenSource | None = None,
        insecure_token: bool = False,
        client_options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        # Here, not first in a worker: a mistake fails where the dataset is made.
        check_security(target, tls=tls, token=token, insecure_token=insecure_token)
        self._input = stream_input(dataset, split, sources, samples_per_epoch)
        if with_sources and not self._input.mixed:
            raise ValueError(
                "with_sources needs a mixed stream: pass sources=[Source(dataset, split)] "
                "instead of dataset and split (a single-source stream has no source indexes)"
            )
        if decode not in (None, "pil", "torchvision"):
            raise ValueError(f"decode must be None, 'pil' or 'torchvision', got {decode!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be 1 or more, got {batch_size}")
        if decode_mode not in DECODE_MODES:
            raise ValueError(f"decode_mode must be 'RGB', 'L' or 'unchanged', got {decode_mode!r}")
        if raw_layout not in ("NHWC", "NCHW"):
            raise ValueError(f"raw_layout must be 'NHWC' or 'NCHW', got {raw_layout!r}")
        if raw_layout != "NHWC" and (server_transform is None or not server_transform.raw):
            raise ValueError("raw_layout applies to a server_transform with output='raw' only")
        if num_workers is not None and num_workers < 0:
            raise ValueError(f"num_workers must be 0 or more, got {num_workers}")
        if isinstance(transform, Transform):
            raise ValueError(
                "transform is a per-sample callable run in this process; pass a "
                "scylla_loader.Transform as server_transform="
            )
        if server_transform is not None:
            if not isinstance(server_transform, Transform):
                raise ValueError(
                    "server_transform must be a scylla_loader.Transform, got "
                    f"{type(server_transform).__name__}"
                )
            if server_transform.raw and (decode is not None or transform is not None):
                raise ValueError(
                    "with a raw server_transform the server already decoded the pixels: items "
                    "are uint8 NHWC batch tensors, so decode and transform must be None (apply "
                    "further augmentation to the batch tensor in the training loop)"
                )
        self.target = target
        self.dataset = self._input.dataset or None
        """Dataset name; ``None`` for a mixed stream."""
        self.split = self._input.split or None
        """Split; ``None`` for a mixed stream."""
        self.sources: tuple[Source, ...] = self._input.sources
        """The mixed stream's sources, checked; empty for one dataset and split."""
        self.samples_per_epoch = self._input.samples_per_epoch
        self.with_sources = with_sources
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle: ShuffleMode | None = shuffle
        self.shard_rule: ShardRule = shard_rule
        self.drop_last = drop_last
        self.rank, self.world_size = resolve_rank(rank, world_size, process_group)
        if _has_replicas(self.world_size):
            # Out of order, a batch holds whichever samples arrived first: replicas of one
            # data-parallel rank would get different batches.
            if ordering == "out-of-order":
                raise ValueError(
                    "ordering='out-of-order' gives replicas of a data-parallel rank (more "
                    "processes than data-parallel ranks) different batches: use 'in-order'"
                )
            ordering = "in-order"
        self.ordering: Ordering | None = ordering
        self.prefetch = prefetch
        self.decode: Decode | None = decode
        self.decode_mode: DecodeMode = decode_mode
        self.raw_layout: RawLayout = raw_layout
        self.num_workers = num_workers
        """The DataLoader's ``num_workers`` when given: what ``len()`` needs (and is checked)."""
        self._epoch_size: int | None = None
        self.transform = transform
        self.server_transform = server_transform
        self.return_ids = return_ids
        self.return_label_blobs = return_label_blobs
        self.columns = validate_column_names(columns) if columns is not None else []
        self.job_id = validate_job_id(job_id) if job_id is not None else None
        check_record_columns(self.columns)
        if return_masks and (server_transform is None or not server_transform.masks):
            raise ValueError(
                "return_masks needs server_transform=Transform(..., masks=True): the server "
                "transforms each mask with its image (without it, label blobs stay as stored; "
                "use return_label_blobs for those)"
            )
        self.return_masks = return_masks
        self.as_dict = as_dict or bool(self.columns) or return_masks
        self.reconnect = reconnect
        self.client_options = dict(client_options or {})
        security_keys = {"tls", "token", "insecure_token", "credentials"}
        misplaced = sorted(security_keys & set(self.client_options))
        if misplaced:
            raise ValueError(
                f"pass {', '.join(misplaced)} as LoaderDataset arguments, not in client_options "
                "(grpc credentials objects cannot travel to DataLoader workers: use tls=)"
            )
        self.client_options.update(tls=tls, token=token, insecure_token=insecure_token)
        # Kept in this process only (a group does not pickle): job_state gathers over it.
        self._group = process_group
        # Given rank and world size that are not the global ones: job_state gathers over the
        # whole world and keeps one copy of what replicas of a data-parallel rank delivered.
        self._replicated = process_group is None and (rank is not None or world_size is not None)
        # In shared memory: [epoch, generation] then, per DataLoader worker id, [next epoch,
        # generation seen]. set_epoch writes the epoch, then bumps the generation; a worker
        # compares the generation with the one it saw last to tell an explicit epoch from its
        # own advance. Per worker id in shared memory (not in the worker's copy of the
        # dataset) so that non-persistent workers, new processes every epoch, advance too. A
        # RawArray (no lock) because a lock belongs to one start method and the DataLoader may
        # fork, spawn or forkserver its workers; set_epoch runs between epochs, while no worker
        # starts an iteration, and each worker writes its own slot only.
        self._epoch_cell = multiprocessing.RawArray("q", [epoch, 0] + [epoch, 0] * _MAX_WORKERS)
        # In shared memory likewise: [batches to skip, generation] then, per worker id, the
        # generation it last took. skip_batches bumps the generation; the next iteration of
        # each worker id (a new worker process included) takes it once.
        self._skip_cell = multiprocessing.RawArray("q", [0, 0] + [0] * _MAX_WORKERS)
        self._pending: dict[str, Any] | None = None
        self._pending_job: dict[str, Any] | None = None
        self._state: dict[str, Any] = {"version": STATE_VERSION, "epoch": None, "next_epoch": epoch}
        self._client: LoaderClient | None = None
        self._client_pid = -1
        self.stall_seconds = 0.0
        """Seconds the training loop waited for items in :meth:`watch`, over all epochs."""
        self.epoch_stall_seconds = 0.0
        """The same for the last pass :meth:`watch` completed."""
        self.epoch_seconds = 0.0
        """Wall time of the last pass :meth:`watch` completed."""

    # -- epochs -----------------------------------------------------------------------------

    def set_epoch(self, epoch: int) -> None:
        """Makes the next iteration (in every worker, persistent ones included) stream
        ``epoch``."""
        if epoch < 0:
            raise ValueError(f"epoch must be 0 or more, got {epoch}")
        self._epoch_cell[0] = epoch
        self._epoch_cell[1] += 1

    @staticmethod
    def _slot() -> int:
        """Where this DataLoader worker's (or the main process's) epoch pair lives in the
        shared cell."""
        info = get_worker_info()
        worker = info.id if info is not None else 0
        if worker >= _MAX_WORKERS:
            raise ValueError(f"LoaderDataset supports up to {_MAX_WORKERS} DataLoader workers")
        return 2 + 2 * worker

    @property
    def _next_epoch(self) -> int:
        return int(self._epoch_cell[self._slot()])

    @_next_epoch.setter
    def _next_epoch(self, epoch: int) -> None:
        self._epoch_cell[self._slot()] = epoch

    def _see_generation(self) -> None:
        self._epoch_cell[self._slot() + 1] = self._epoch_cell[1]

    def _begin_epoch(self) -> int:
        slot = self._slot()
        generation = self._epoch_cell[1]
        if generation != self._epoch_cell[slot + 1]:
            self._epoch_cell[slot + 1] = generation
            epoch = int(self._epoch_cell[0])
        else:
            epoch = int(self._epoch_cell[slot])
        self._epoch_cell[slot] = epoch + 1
        return epoch

    # -- skipping batches after a checkpoint -------------------------------------------------

    def skip_batches(self, n: int) -> None:
        """Makes the next iteration, resumed from a loaded state, leave out the next ``n``
        batches its stream had delivered after the state was taken (e.g. the batches after a
        checkpoint that led to a loss spike): the loader skips exactly their samples, recorded
        in the job's ledger (marked ``skipped`` there), and the epoch delivers every other
        remaining sample once. Needs ``job_id`` and a state from :meth:`load_state_dict`
        (directly, or through a ``StatefulDataLoader``'s ``load_state_dict``), called before
        or after loading it, before iterating. With DataLoader workers each worker has a
        stream of its own, with its own batches: every worker stream skips its next ``n``
        batches. Only the first iteration after this call skips.

        A ValueError, here or at that iteration (in the worker): no ``job_id``; a job state
        (:meth:`load_job_state`, which the loader cannot skip in: continue at the old world
        size with the workers' states instead), no loaded state, a state taken before its
        stream delivered a batch, at the end of its epoch, or saved before states kept the
        batch index. Batches the ledger does not hold (more than the stream delivered) are a
        :class:`~scylla_loader.LoaderError` INVALID_ARGUMENT at the first item."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"skip_batches needs a number of batches, 1 or more, got {n!r}")
        if self.job_id is None:
            raise ValueError(
                "skip_batches needs job_id: the loader skips batches the job's ledger recorded"
            )
        if self._pending_job is not None:
            raise ValueError(_SKIP_JOB_STATE)
        if self._pending is not None:
            self._skip_range(self._pending, n)  # a loaded state that cannot skip fails now
        self._skip_cell[0] = n
        self._skip_cell[1] += 1

    def _take_skip(self) -> int | None:
        """The batches skip_batches asked this worker id's next iteration to skip, once."""
        slot = 2 + (self._slot() - 2) // 2
        generation = self._skip_cell[1]
        if self._skip_cell[slot] == generation:
            return None
        self._skip_cell[slot] = generation
        return int(self._skip_cell[0])

    @staticmethod
    def _skip_range(state: Mapping[str, Any], n: int | None) -> tuple[int, int] | None:
        """The batches a stream resumed from ``state`` skips: ``n`` after its last batch, or
        the range a state taken before a skipping stream's first batch still carries."""
        saved = state.get("skip_batches")
        if n is None:
            return None if saved is None else (int(saved[0]), int(saved[1]))
        if saved is not None:
            raise ValueError(
                f"the state skips batches {saved[0]} to {saved[1]} already (taken before the "
                "skipping stream's first item): load it without skip_batches"
            )
        if state.get("job_checkpoint") is not None:
            raise ValueError(_SKIP_JOB_STATE)
        if state.get("epoch") is None:
            raise ValueError(
                "skip_batches: the state was taken before this stream delivered a batch, so no "
                "batch after it can be named"
            )
        if state.get("epoch_done"):
            raise ValueError(
                f"skip_batches: the state was taken at the end of epoch {state['epoch']}: no "
                "batch of it is left to skip (a resumed epoch skips, a new one cannot)"
            )
        last = state.get("batch_index")
        if last is None:
            raise ValueError(
                "skip_batches: the state holds no batch index (saved by an older scylla_loader); "
                "skip with LoaderClient.stream_batches(resume_token=..., skip_batches=...)"
            )
        return (last + 1, last + n)

    # -- iteration --------------------------------------------------------------------------

    def _stream_key(self, rank: int, world_size: int) -> str:
        # For one dataset and split, what it reads is "dataset|split", as before mixing, so
        # states saved then still match.
        key = (
            f"{self._input.key()}|batch {self.batch_size}|seed {self.seed}|"
            f"shuffle {self.shuffle}|{self.shard_rule}|drop_last {self.drop_last}|"
            f"ordering {self.ordering}|rank {rank} of {world_size}"
        )
        # Only when set, so states saved before transforms existed still match; a resumed
        # epoch with other augmentation would not be the epoch that was interrupted.
        if self.server_transform is not None:
            key += f"|transform {self.server_transform!r}"
        return key

    def _job_key(self) -> str:
        """What every stream of this job shares: the stream key without rank and world."""
        return "|".join(p for p in self._stream_key(0, 1).split("|") if not p.startswith("rank "))

    def _client_here(self) -> LoaderClient:
        # A client inherited through fork() must not be used (grpc's threads did not survive
        # the fork); the child makes its own.
        if self._client is None or self._client_pid != os.getpid():
            self._client = self._new_client()
            self._client_pid = os.getpid()
        return self._client

    def _new_client(self) -> LoaderClient:
        """A client of this process's own: its channel never takes a connection from grpc's
        process-wide pool, where a fork leaves the parent's connections. A channel that did
        fails its first calls with UNAVAILABLE "Wrong file descriptor generation" (4 to 5 in
        100 forked children of a process with a channel open to the same loader, measured;
        none with a pool of its own)."""
        options = dict(self.client_options)
        options["channel_options"] = (*options.get("channel_options", ()), _OWN_SUBCHANNELS)
        return LoaderClient(self.target, reconnect=self.reconnect, **options)

    def __iter__(self) -> Iterator[Any]:
        _refuse_dataloader_batching()
        info = get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        if self.num_workers is not None and max(1, self.num_workers) != workers:
            raise ValueError(
                f"LoaderDataset(num_workers={self.num_workers}) runs in a DataLoader with "
                f"num_workers={0 if info is None else workers}: give both the same number "
                "(len() counts the items of that many workers)"
            )
        shard = worker_shard(self.rank, self.world_size, worker, workers)
        key = self._stream_key(shard.rank, shard.world_size)
        pending, self._pending = self._pending, None
        job, self._pending_job = self._pending_job, None
        skip_n = self._take_skip()
        token: bytes | None = None
        checkpoint: bytes | None = None
        skip: tuple[int, int] | None = None
        batch_index: int | None = None
        if job is not None:
            if skip_n is not None:
                raise ValueError(_SKIP_JOB_STATE)
            # load_job_state set the epoch: the checkpoint serves that epoch's iteration only
            # (a set_epoch to another epoch since then means the job moved on).
            epoch = self._begin_epoch()
            if epoch == job["epoch"]:
                checkpoint = job["job_checkpoint"]
        elif pending is not None and pending["epoch"] is not None:
            if pending["stream"] != key:
                raise ValueError(
                    "the resume state was saved by a different stream and cannot continue this "
                    f"one: saved {pending['stream']!r}, now {key!r} (same dataset and split, or "
                    "sources and samples_per_epoch, batch size, seed, rules, ranks, DataLoader "
                    "workers and server transform are needed; to continue at another world "
                    "size or worker count, use job_state and load_job_state)"
                )
            epoch = int(pending["epoch"])
            token = pending["resume_token"]
            checkpoint = pending.get("job_checkpoint")
            batch_index = pending.get("batch_index")
            skip = self._skip_range(pending, skip_n)
            self._next_epoch = epoch + 1
            self._see_generation()
            if pending["epoch_done"]:
                self._state = dict(pending)
                return
        else:
            if skip_n is not None:
                raise ValueError(
                    "skip_batches needs a state to resume from (load_state_dict, or a "
                    "StatefulDataLoader's), taken once this stream delivered a batch: the "
                    "batches skipped are those after it"
                )
            epoch = self._begin_epoch()
        self._state = {
            "version": STATE_VERSION,
            "stream": key,
            "job": self._job_key(),
            "job_id": self.job_id,
            "rank": shard.rank,
            "world_size": shard.world_size,
            "epoch": epoch,
            "resume_token": token,
            "job_checkpoint": checkpoint,
            "epoch_done": False,
            # The last batch delivered's index in the stream's epoch (what skip_batches counts
            # from), and a skip asked for, until the stream delivers past it.
            "batch_index": batch_index,
            "skip_batches": None if skip is None else list(skip),
        }
        # In the trainer's own process each pass has a client of its own, closed when the pass
        # ends (so a pass ending never cancels another one still running there); a worker keeps
        # one from epoch to epoch.
        client = self._client_here() if info is not None else self._new_client()
        try:
            stream = client.stream_batches(
                self._input.dataset or None,
                self._input.split or None,
                sources=self._input.sources or None,
                samples_per_epoch=self._input.samples_per_epoch,
                batch_size=self.batch_size,
                seed=self.seed,
                first_epoch=epoch,
                epochs=1,
                rank=shard.rank,
                world_size=shard.world_size,
                shard_rule=self.shard_rule,
                shuffle=self.shuffle,
                drop_last=self.drop_last,
                ordering=self.ordering,
                prefetch=self.prefetch,
                resume_token=token,
                transform=self.server_transform,
                job_checkpoint=checkpoint,
                columns=self.columns or None,
                job_id=self.job_id,
                skip_batches=skip,
            )
        except BaseException:
            if info is None:
                client.close()
            raise
        raw = self.server_transform is not None and self.server_transform.raw
        try:
            for batch in stream:
                item: tuple[Any, ...]
                if raw:
                    # Zero-copy over the message's bytes; int64 labels, as collate gives.
                    images = batch.tensor()
                    if self.raw_layout == "NCHW":
                        images = images.permute(0, 3, 1, 2)
                    item = (images, torch.from_numpy(batch.labels.astype(np.int64)))
                else:
                    item = collate(
                        batch.samples, batch.labels, self.decode, self.transform, self.decode_mode
                    )
                out: Any = item
                if self.as_dict:
                    masks = None
                    if self.return_masks:
                        masks = batch.mask_tensor()
                        if self.raw_layout == "NCHW":
                            masks = masks.permute(0, 3, 1, 2)
                    out = record(batch, item[0], item[1], masks, self._input.mixed)
                else:
                    if self.return_ids:
                        out = (*out, batch.ids)
                    if self.return_label_blobs:
                        out = (*out, _label_blob_list(batch))
                    if self.with_sources:
                        out = (*out, _source_tensor(batch))
                # The state is updated before the yield: a snapshot taken once the item is out
                # (StatefulDataLoader's) counts it as delivered.
                self._state = {
                    **self._state,
                    "resume_token": batch.resume_token,
                    "epoch_done": batch.last_in_epoch,
                    "batch_index": batch.index,
                    "skip_batches": None,
                }
                yield out
            self._state = {**self._state, "epoch_done": True, "skip_batches": None}
        finally:
            stream.close()
            if info is None:
                # Iterated in the trainer's own process (num_workers=0: validation, a quick
                # look): its channel closes with the pass, so gRPC's threads are gone before
                # that process forks DataLoader workers (forksafe.py). Kept open, such
                # channels were carried into every later fork of the Python test process (10
                # open at most of them), and one of its DataLoaders with workers never yielded
                # in CI.
                client.close()

    # -- length -----------------------------------------------------------------------------

    def epoch_size(self) -> int:
        """Positions of one epoch, all ranks and workers together, before sharding: the split's
        samples, or a mixed epoch's (``samples_per_epoch``, or what 0 makes of the sources'
        sizes). Asked of the loader once, then kept; the call runs in a short-lived child
        process, so gRPC never starts in the process that forks the DataLoader workers (see
        :mod:`.isolated`)."""
        if self._epoch_size is None:
            self._epoch_size = call_in_child(self._ask_epoch_size)
        return self._epoch_size

    def _ask_epoch_size(self) -> int:
        with self._new_client() as c:
            if self._input.mixed:
                sizes = [split_size(c, s.dataset, s.split) for s in self._input.sources]
                return mixed_positions(self._input.sources, sizes, self.samples_per_epoch)
            return split_size(c, self._input.dataset, self._input.split)

    def __len__(self) -> int:
        """Items (batches) a DataLoader with ``num_workers`` workers yields per epoch on this
        rank: every worker's stream's batches under the shard rule and ``drop_last``. Needs
        ``num_workers=`` (the DataLoader's; a TypeError otherwise, which tools that probe
        ``len()`` take as "unknown"). An epoch resumed from a checkpoint yields fewer."""
        if self.num_workers is None:
            raise TypeError(
                "len(LoaderDataset) needs num_workers= (the DataLoader's num_workers, 0 "
                "without workers): the items per epoch depend on how many streams share it"
            )
        n = self.epoch_size()
        workers = max(1, self.num_workers)
        total = 0
        for w in range(workers):
            shard = worker_shard(self.rank, self.world_size, w, workers)
            samples = shard_length(n, shard.rank, shard.world_size, self.shard_rule)
            total += batch_count(samples, self.batch_size, self.drop_last)
        return total

    # -- checkpoints ------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Where this worker's stream stands: epoch, resume token and batch index of the last
        item delivered, whether the epoch is complete, and the stream it belongs to. Plain
        values (picklable, ``torch.save``-able)."""
        return {**self._state, "next_epoch": self._next_epoch}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Makes the next iteration continue right after the item ``state`` was taken at. A
        state that is not one of these (wrong keys or types, another version) is a ValueError:
        a damaged checkpoint is never taken for a fresh start."""
        if not isinstance(state, Mapping) or state.get("version") != STATE_VERSION:
            raise ValueError(
                f"not a LoaderDataset state (version {STATE_VERSION} expected): {state!r:.200}"
            )
        if state.get("epoch") is None:
            next_epoch = state.get("next_epoch")
            if not isinstance(next_epoch, int) or next_epoch < 0:
                raise ValueError(f"corrupt LoaderDataset state: bad next_epoch {next_epoch!r}")
            self._next_epoch = next_epoch
            self._pending = None
            return
        problems = []
        if not isinstance(state.get("epoch"), int) or state["epoch"] < 0:
            problems.append(f"epoch {state.get('epoch')!r}")
        if not isinstance(state.get("stream"), str):
            problems.append(f"stream {state.get('stream')!r}")
        if not (state.get("resume_token") is None or isinstance(state.get("resume_token"), bytes)):
            problems.append("resume_token is neither bytes nor None")
        if not isinstance(state.get("epoch_done"), bool):
            problems.append(f"epoch_done {state.get('epoch_done')!r}")
        # Both absent from states saved before skip_batches existed.
        index = state.get("batch_index")
        if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
            problems.append(f"batch_index {index!r}")
        skip = state.get("skip_batches")
        if skip is not None and not (
            isinstance(skip, (list, tuple)) and len(skip) == 2
            and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in skip)
        ):
            problems.append(f"skip_batches {skip!r}")
        if problems:
            raise ValueError(f"corrupt LoaderDataset state: {', '.join(problems)}")
        self._check_job_id(state.get("job_id"), "resume state")
        self._pending = dict(state)
        self._state = dict(state)

    def job_state(self, state: Any = None) -> dict[str, Any]:
        """One state for the whole job: this rank's worker states (from ``state``: a
        ``StatefulDataLoader.state_dict()``, a list of :meth:`state_dict` results, or, when
        ``None``, this dataset's own state, i.e. iterated without workers), gathered from
        every rank with ``torch.distributed.all_gather_object`` when a process group is
        initialised, and merged (:func:`merge_states`). Every rank must call it (a collective);
        every rank gets the same plain, ``torch.save``-able dict; save it once, e.g. on rank 0.
        """
        mine = find_worker_states(self.state_dict() if state is None else state)
        if not mine:
            raise ValueError(
                "no LoaderDataset worker state found: pass the StatefulDataLoader's state_dict(), "
                "taken after the workers delivered items"
            )
        import torch.distributed as dist

        gathered: list[Any] = [mine]
        if self._group is not None:
            gathered = [None] * dist.get_world_size(self._group)
            dist.all_gather_object(gathered, mine, group=self._group)
        elif dist.is_available() and dist.is_initialized():
            gathered = [None] * dist.get_world_size()
            dist.all_gather_object(gathered, mine)
        states = [w for rank_states in gathered for w in rank_states]
        if self._replicated:
            states = _one_per_stream(states)
        return merge_states(states)

    def load_job_state(self, job: Mapping[str, Any]) -> None:
        """Makes the next iteration continue the job state ``job`` (from :meth:`job_state`)
        at this dataset's rank, world size and DataLoader worker count: each worker streams its
        share of the epoch's samples not yet delivered, then later epochs as usual. It sets
        the epoch (as :meth:`set_epoch` does) to the job's; ``set_epoch`` of that same epoch
        afterwards keeps the checkpoint, another epoch drops it. Call it
        before iterating, in a new DataLoader (a ``StatefulDataLoader``'s own state is tied to
        its worker count: do not load that one too). Another job's state, or anything else, is
        a ValueError."""
        if (
            not isinstance(job, Mapping)
            or job.get("kind") != JOB_STATE_KIND
            or job.get("version") != JOB_STATE_VERSION
        ):
            raise ValueError(f"not a LoaderDataset job state: {job!r:.200}")
        if job.get("job") != self._job_key():
            raise ValueError(
                "the job state belongs to another job: saved "
                f"{job.get('job')!r}, now {self._job_key()!r} (same dataset and split, or "
                "sources and samples_per_epoch, batch size, seed, rules and server transform "
                "are needed)"
            )
        self._check_job_id(job.get("job_id"), "job state")
        epoch = job.get("epoch")
        checkpoint = job.get("job_checkpoint")
        if not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"corrupt job state: bad epoch {epoch!r}")
        if not (checkpoint is None or isinstance(checkpoint, bytes)):
            raise ValueError("corrupt job state: job_checkpoint is neither bytes nor None")
        self._pending = None
        self._pending_job = dict(job)
        self.set_epoch(epoch)

    def _check_job_id(self, saved: Any, what: str) -> None:
        """A ValueError when a state saved by a stream with a job id is loaded under another
        job id or none. A state without one (saved before job ids existed, or by a job that
        named none) loads under any: the ledger then records the job from here on."""
        if saved is not None and saved != self.job_id:
            raise ValueError(
                f"the {what} was saved by job_id {saved!r} and this dataset has job_id "
                f"{self.job_id!r}: pass job_id={saved!r} to continue that job's ledger (an "
                "epoch resumed under another name would be split between two ledgers)"
            )

    def __getstate__(self) -> dict[str, Any]:
        # Pickled into spawned workers: the channel stays behind.
        state = self.__dict__.copy()
        state["_client"] = None
        state["_client_pid"] = -1
        state["_group"] = None
        return state

    # -- trainer-side stall -----------------------------------------------------------------

    def watch(self, items: Iterable[T]) -> Iterator[T]:
        """Yields ``items`` (a DataLoader over this dataset) while timing how long the training
        loop waits for each: ``stall_seconds``, ``epoch_stall_seconds``, ``epoch_seconds``, and
        an INFO log line per pass on the ``scylla_loader`` logger."""
        start = time.perf_counter()
        waited = 0.0
        iterator = iter(items)
        count = 0
        while True:
            t0 = time.perf_counter()
            try:
                item = next(iterator)
            except StopIteration:
                break
            finally:
                waited += time.perf_counter() - t0
            count += 1
            yield item
        self.epoch_seconds = time.perf_counter() - start
        self.epoch_stall_seconds = waited
        self.stall_seconds += waited
        share = waited / self.epoch_seconds if self.epoch_seconds > 0 else 0.0
        log.info(
            "pass of %d items in %.1f s; the training loop waited %.1f s (%.0f%%) for data",
            count,
            self.epoch_seconds,
            waited,
            100 * share,
        )


_SKIP_JOB_STATE = (
    "skip_batches: a job state (load_job_state, or a worker continuing one) resumes by job "
    "checkpoint, which cannot name batches to skip: resume from the workers' own states "
    "(load_state_dict) at the world size and worker count that saved them to skip"
)


def _has_replicas(data_parallel_size: int) -> bool:
    """Whether torch.distributed runs more processes than there are data-parallel ranks, so
    that several processes (tensor/pipeline-parallel peers) stream as one rank."""
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > data_parallel_size


def _refuse_dataloader_batching() -> None:
    """A ValueError when the caller of this iterator is a DataLoader that batches items
    (``batch_size`` other than None): each item is already a batch, and the DataLoader would
    silently stack ``batch_size`` of them into ``(batch_size, B, ...)`` tensors."""
    try:
        from torch.utils.data._utils.fetch import _IterableDatasetFetcher
    except ImportError:  # a torch without it: nothing to check against
        return
    frame = sys._getframe(2)  # this function's caller is __iter__'s generator frame
    fetcher = frame.f_locals.get("self") if frame is not None else None
    if isinstance(fetcher, _IterableDatasetFetcher) and fetcher.auto_collation:
        raise ValueError(
            "a LoaderDataset yields whole batches (batch_size is set on the dataset): make "
            "the DataLoader with batch_size=None, e.g. DataLoader(dataset, batch_size=None, "
            "num_workers=2); its default batch_size=1 would stack items into (1, B, ...)"
        )


def _one_per_stream(states: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The worker states of every process, with one copy of each stream: replicas of a
    data-parallel rank (tensor-parallel peers) deliver the same batches, so their states
    agree (their resume tokens are sealed apart, each its own bytes, but say the same);
    replicas in different epochs were not stepped together, which is an error."""
    kept: dict[tuple[Any, Any], Mapping[str, Any]] = {}
    for w in states:
        key = (w.get("stream"), w.get("rank"))
        if key in kept and _position(kept[key]) != _position(w):
            raise ValueError(
                f"replicas of stream rank {w.get('rank')} are at different points (epoch "
                f"{kept[key].get('epoch')} and {w.get('epoch')}): take the job state at a "
                "training step, when every replica delivered the same items"
            )
        kept.setdefault(key, w)
    return list(kept.values())


def _position(state: Mapping[str, Any]) -> tuple[Any, ...]:
    return (state.get("epoch"), state.get("epoch_done"), state.get("resume_token") is None)


def _label_blob_list(batch: Batch) -> list[bytes]:
    """Each sample's label blob as ``bytes`` (copies: views into the message cannot travel
    from a DataLoader worker), ``b""`` for a sample without one."""
    if batch.label_blobs is None:
        return [b""] * len(batch)
    return [bytes(blob) for blob in batch.label_blobs]


def _source_tensor(batch: Batch) -> torch.Tensor:
    """The batch's source indexes as the ``int64`` tensor ``with_sources`` promises (a mixed
    stream's batches always carry them: the client refuses one that does not)."""
    indexes = batch.source_indexes
    if indexes is None:
        raise ValueError("a batch of a mixed stream without source indexes")
    return torch.from_numpy(indexes)
