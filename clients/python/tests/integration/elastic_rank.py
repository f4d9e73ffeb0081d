"""One rank of the elastic DDP tests: `python -m tests.integration.elastic_rank ARGS_JSON` with
MASTER_ADDR and MASTER_PORT in the environment. Streams a split through a StatefulDataLoader
(optionally continuing a saved job state, at whatever world size and worker count it is run
with); with `stop_after`, stops after that many items, gathers the job state from every rank
and has rank 0 save it. Writes the ids of the items it consumed, per epoch."""

from __future__ import annotations

import json
import sys

import torch
import torch.distributed as dist
from torchdata.stateful_dataloader import StatefulDataLoader

from scylla_loader.torch import LoaderDataset


def main() -> None:
    args = json.loads(sys.argv[1])
    rank, world = args["rank"], args["world"]
    dist.init_process_group("gloo", rank=rank, world_size=world)
    dataset = LoaderDataset(
        args["target"], "mnist", args["split"], batch_size=50, seed=9, shard_rule=args["rule"],
        return_ids=True,
    )
    loader = StatefulDataLoader(dataset, batch_size=None, num_workers=args["workers"])
    first = 0
    if args.get("load"):
        job = torch.load(args["load"], weights_only=False)
        dataset.load_job_state(job)
        first = job["epoch"]
    result: dict[int, list[str]] = {}
    steps: dict[int, int] = {}
    stopped = False
    for epoch in range(first, args["last_epoch"] + 1):
        dataset.set_epoch(epoch)
        ids: list[str] = result.setdefault(epoch, [])
        steps[epoch] = 0
        for _samples, _labels, batch_ids in loader:
            ids += batch_ids
            steps[epoch] += 1
            if steps[epoch] == args.get("stop_after"):
                job = dataset.job_state(loader.state_dict())  # a collective: every rank is here
                if rank == 0:
                    torch.save(job, args["save"])
                stopped = True
                break
        if stopped:
            break
    with open(args["out"], "w") as f:
        json.dump({"ids": result, "steps": steps}, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
