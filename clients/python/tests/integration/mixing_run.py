"""A trainer process of the mixed-stream checkpoint test:
`python -m tests.integration.mixing_run ARGS_JSON`. Streams epochs [first, last] of a mixture
of sources through a StatefulDataLoader with 2 persistent workers (optionally restored from a
checkpoint file), and records every item as its (source index, id) pairs, in order, per epoch.
With `stop_after`, saves the loader's state after that many items and stops there, as a
trainer that is killed after its checkpoint would; nothing after the checkpoint is recorded."""

from __future__ import annotations

import json
import sys

import torch
from torchdata.stateful_dataloader import StatefulDataLoader

from scylla_loader import Source
from scylla_loader.torch import LoaderDataset


def main() -> None:
    args = json.loads(sys.argv[1])
    dataset = LoaderDataset(
        args["target"],
        sources=[Source(**s) for s in args["sources"]],
        samples_per_epoch=args["samples_per_epoch"],
        batch_size=args["batch_size"],
        seed=args["seed"],
        ordering="in-order",
        return_ids=True,
        with_sources=True,
    )
    loader = StatefulDataLoader(dataset, batch_size=None, num_workers=2, persistent_workers=True)
    if args.get("load"):
        loader.load_state_dict(torch.load(args["load"], weights_only=False))
    epochs: dict[int, list[list[tuple[int, str]]]] = {}
    delivered = 0
    stopped = False
    for epoch in range(args["first"], args["last"] + 1):
        dataset.set_epoch(epoch)
        items = epochs.setdefault(epoch, [])
        for _samples, _labels, ids, sources in loader:
            items.append(list(zip(sources.tolist(), ids)))
            delivered += 1
            if delivered == args.get("stop_after"):
                torch.save(loader.state_dict(), args["save_to"])
                stopped = True
                break
        if stopped:
            break
    with open(args["out"], "w") as f:
        json.dump(epochs, f)


if __name__ == "__main__":
    main()
