"""Which share of a split one DataLoader worker streams."""

from __future__ import annotations

import os
from dataclasses import dataclass


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


def resolve_rank(rank: int | None, world_size: int | None) -> tuple[int, int]:
    """This process's data-parallel rank and world size: from ``torch.distributed`` when it is
    initialised, else the arguments, else the ``RANK`` / ``WORLD_SIZE`` environment variables
    (as set by torchrun), else 0 of 1. Arguments that contradict an initialised process group
    are an error rather than silently wrong shards."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        r, w = dist.get_rank(), dist.get_world_size()
        if (rank is not None and rank != r) or (world_size is not None and world_size != w):
            raise ValueError(
                f"rank/world_size {rank}/{world_size} contradict torch.distributed ({r}/{w})"
            )
        return r, w
    if rank is None:
        rank = int(os.environ.get("RANK", "0"))
    if world_size is None:
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
    worker_shard(rank, world_size, 0, 1)  # validates
    return rank, world_size
