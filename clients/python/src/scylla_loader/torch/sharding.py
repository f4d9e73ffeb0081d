"""Which share of a split one DataLoader worker streams."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Shard:
    """The stream rank and world size of one worker: worker ``w`` of ``n`` on data-parallel
    rank ``r`` of ``W`` streams as rank ``r * n + w`` of ``W * n``, so the workers of all ranks
    together partition the split as ``W * n`` independent streams would."""

    rank: int
    world_size: int


def worker_shard(rank: int, world_size: int, worker: int, num_workers: int) -> Shard:
    """The :class:`Shard` of worker ``worker`` (of ``num_workers``; 0 and 1 without workers) on
    data-parallel rank ``rank`` of ``world_size``. A ValueError for impossible combinations."""
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"rank must be in [0, world_size), got rank {rank} of {world_size}")
    if num_workers < 1 or not 0 <= worker < num_workers:
        raise ValueError(f"worker must be in [0, num_workers), got {worker} of {num_workers}")
    return Shard(rank * num_workers + worker, world_size * num_workers)


def resolve_rank(
    rank: int | None, world_size: int | None, process_group: Any = None
) -> tuple[int, int]:
    """This process's data-parallel rank and world size, in this order of precedence:

    - ``process_group``: a ``torch.distributed`` group holding one process per data-parallel
      rank (e.g. the data-parallel group of a tensor/pipeline-parallel or HSDP layout): its
      rank and size (``rank``/``world_size`` given as well must agree);
    - ``rank`` and ``world_size`` (both): taken as they are, as the data-parallel rank and
      size, whatever ``torch.distributed`` says (e.g. ``global_rank // tp`` of
      ``world // tp`` with tensor parallelism ``tp``, or 0 of 1 to read a whole split on one
      process while the group is up); processes given the same rank get the same batches;
    - ``torch.distributed``, when initialised: the global rank and world size (plain DDP);
    - the ``RANK`` / ``WORLD_SIZE`` environment variables (as set by torchrun), else 0 of 1.
    """
    if process_group is not None:
        import torch.distributed as dist

        if not (dist.is_available() and dist.is_initialized()):
            raise ValueError("process_group needs torch.distributed to be initialised")
        r, w = dist.get_rank(process_group), dist.get_world_size(process_group)
        if r < 0:
            raise ValueError("this process is not a member of process_group")
        if (rank is not None and rank != r) or (world_size is not None and world_size != w):
            raise ValueError(
                f"rank/world_size {rank}/{world_size} contradict process_group ({r} of {w}): "
                "pass one or the other"
            )
        return r, w
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        if rank is None and world_size is None:
            return dist.get_rank(), dist.get_world_size()
        if rank is None or world_size is None:
            raise ValueError(
                "with torch.distributed initialised, pass both rank and world_size (the "
                "data-parallel rank and size), or process_group, or neither (the global ones)"
            )
    if rank is None:
        rank = int(os.environ.get("RANK", "0"))
    if world_size is None:
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
    worker_shard(rank, world_size, 0, 1)  # validates
    return rank, world_size
