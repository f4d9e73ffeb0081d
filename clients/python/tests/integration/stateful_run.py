"""A trainer process of the StatefulDataLoader checkpoint tests:
`python -m tests.integration.stateful_run ARGS_JSON`. Streams epochs [first, last] of a split
through a StatefulDataLoader with 2 persistent workers (optionally restored from a checkpoint
file), records the ids of every item in order per epoch, and saves checkpoints: after the
`save_after`-th item, after the first epoch's last item (inside the loop) and after its loop."""

from __future__ import annotations

import json
import sys

import torch
from torchdata.stateful_dataloader import StatefulDataLoader

from scylla_loader.torch import LoaderDataset


def main() -> None:
    args = json.loads(sys.argv[1])
    dataset = LoaderDataset(
        args["target"], "mnist", args["split"], batch_size=args["batch_size"], seed=5,
        ordering="in-order", return_ids=True,
    )
    loader = StatefulDataLoader(dataset, batch_size=None, num_workers=2, persistent_workers=True)
    if args.get("load"):
        loader.load_state_dict(torch.load(args["load"], weights_only=False))
    epochs: dict[int, list[list[str]]] = {}
    delivered = 0
    for epoch in range(args["first"], args["last"] + 1):
        dataset.set_epoch(epoch)
        items: list[list[str]] = []
        last_state = None
        for _samples, _labels, ids in loader:
            items.append(ids)
            delivered += 1
            if delivered == args.get("save_after"):
                torch.save(loader.state_dict(), args["save_to"])
            if epoch == args["first"] and args.get("save_end_in"):
                last_state = loader.state_dict()
        epochs[epoch] = items
        if epoch == args["first"]:
            if args.get("save_end_in"):
                torch.save(last_state, args["save_end_in"])
            if args.get("save_end_after"):
                torch.save(loader.state_dict(), args["save_end_after"])
    with open(args["out"], "w") as f:
        json.dump(epochs, f)


if __name__ == "__main__":
    main()
