"""A trainer process of the records checkpoint test:
`python -m tests.integration.records_run ARGS_JSON`. Streams one epoch of a dataset with
metadata columns through a StatefulDataLoader of 2 workers as dict items (optionally restored
from a checkpoint file, asking for other columns then), writes every item's ids with their
column values, and saves a checkpoint after the `save_after`-th item."""

from __future__ import annotations

import json
import math
import sys

import torch
from torchdata.stateful_dataloader import StatefulDataLoader

from scylla_loader.torch import LoaderDataset


def plain(value: object) -> object:
    """A record's value as JSON: tensors to lists, NaN to None."""
    if isinstance(value, torch.Tensor):
        value = value.tolist()
    if isinstance(value, list):
        return [None if isinstance(v, float) and math.isnan(v) else v for v in value]
    return value


def main() -> None:
    args = json.loads(sys.argv[1])
    dataset = LoaderDataset(
        args["target"], args["dataset"], "all", batch_size=6, seed=3, num_workers=2,
        columns=args["columns"],
    )
    loader = StatefulDataLoader(dataset, batch_size=None, num_workers=2, persistent_workers=True)
    if args.get("load"):
        loader.load_state_dict(torch.load(args["load"], weights_only=False))
    items = []
    for item in loader:
        assert set(item) == {"image", "label", "id", *args["columns"]}, sorted(item)
        assert len(item["image"]) == len(item["id"]) == len(item["label"])
        items.append({"id": item["id"], **{c: plain(item[c]) for c in args["columns"]}})
        if len(items) == args.get("save_after"):
            torch.save(loader.state_dict(), args["save_to"])
    with open(args["out"], "w") as f:
        json.dump(items, f)


if __name__ == "__main__":
    main()
