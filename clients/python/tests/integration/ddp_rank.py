"""One rank of the exactly-once DDP test: `python -m tests.integration.ddp_rank RANK OUT` with
MASTER_ADDR, MASTER_PORT, WORLD_SIZE, LOADER_TARGET, SPLIT in the environment. Writes, per
epoch, the ids this rank received and its step count."""

from __future__ import annotations

import json
import os
import sys

import torch.distributed as dist
from torch.utils.data import DataLoader

from scylla_loader.torch import LoaderDataset


def main() -> None:
    rank, out = int(sys.argv[1]), sys.argv[2]
    dist.init_process_group("gloo", rank=rank, world_size=int(os.environ["WORLD_SIZE"]))
    dataset = LoaderDataset(
        os.environ["LOADER_TARGET"], "mnist", os.environ["SPLIT"], batch_size=200, seed=11,
        return_ids=True,
    )
    assert (dataset.rank, dataset.world_size) == (rank, dist.get_world_size())
    loader = DataLoader(dataset, batch_size=None, num_workers=2, persistent_workers=True)
    result = {}
    for epoch in range(2):
        dataset.set_epoch(epoch)
        ids: list[str] = []
        steps = 0
        for _samples, labels, batch_ids in loader:
            assert len(labels) == len(batch_ids)
            ids += batch_ids
            steps += 1
        result[epoch] = {"ids": ids, "steps": steps}
        dist.barrier()
    leave(out, result)


def leave(out: str, result: object) -> None:
    """Writes this process's result for the test to read and leaves the process group."""
    with open(out, "w") as f:
        json.dump(result, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
