"""One process of the tensor-parallel layout test: `python -m tests.integration.tp_rank RANK
OUT` with MASTER_ADDR, MASTER_PORT, WORLD_SIZE (4), LOADER_TARGET, SPLIT in the environment.
Tensor parallelism 2: processes 2d and 2d+1 are the replicas of data-parallel rank d. Writes
the ids of each batch received with the data-parallel rank given as rank/world_size and as
process_group, the job state taken after three items, and what rank 0 read alone with rank 0
of 1 while the group was up."""

from __future__ import annotations

import os
import sys
from typing import Any

import torch.distributed as dist
from torch.utils.data import DataLoader

from scylla_loader.torch import LoaderDataset

from .ddp_rank import leave

TP = 2


def batches(dataset: LoaderDataset, workers: int) -> list[list[str]]:
    data = DataLoader(dataset, batch_size=None, num_workers=workers)
    return [list(ids) for _s, _l, ids in data]


def main() -> None:
    rank, out = int(sys.argv[1]), sys.argv[2]
    world = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", rank=rank, world_size=world)
    # Every process makes every group, in the same order (torch.distributed's rule).
    dp_groups = [dist.new_group(list(range(t, world, TP))) for t in range(TP)]
    dp_group = dp_groups[rank % TP]
    target, split = os.environ["LOADER_TARGET"], os.environ["SPLIT"]
    common: dict[str, Any] = {"batch_size": 500, "seed": 5, "return_ids": True}
    given = LoaderDataset(target, "mnist", split, rank=rank // TP, world_size=world // TP, **common)
    grouped = LoaderDataset(target, "mnist", split, process_group=dp_group, **common)
    result: dict[str, Any] = {
        "given_rank": [given.rank, given.world_size],
        "group_rank": [grouped.rank, grouped.world_size],
        "given": batches(given, 2),
        "group": batches(grouped, 1),
    }
    # A job state from replicas: every process delivered three items of epoch 1.
    it = iter(given)
    for _ in range(3):
        next(it)
    job = given.job_state()
    it.close()
    result["job"] = {"epoch": job["epoch"], "checkpoint": (job["job_checkpoint"] or b"").hex()}
    dist.barrier()
    if rank == 0:
        alone = LoaderDataset(target, "mnist", split, rank=0, world_size=1, **common)
        result["alone"] = [i for ids in batches(alone, 2) for i in ids]
    dist.barrier()
    leave(out, result)


if __name__ == "__main__":
    main()
