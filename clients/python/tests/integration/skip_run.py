"""The trainer process of the loss-spike test (test_ledger.py):
`python -m tests.integration.skip_run ARGS_JSON`. A new process goes back to a
StatefulDataLoader checkpoint of a ledger job (2 workers, out of order), skips the next
`skip` batches of each worker stream after it, finishes the epoch and writes every item's
ids, in order, to `out`."""

from __future__ import annotations

import json
import sys

import torch
from torchdata.stateful_dataloader import StatefulDataLoader

from scylla_loader.torch import LoaderDataset


def main() -> None:
    args = json.loads(sys.argv[1])
    dataset = LoaderDataset(
        args["target"], args["dataset"], "all", batch_size=args["batch_size"],
        seed=args["seed"], ordering="out-of-order", num_workers=2, return_ids=True,
        job_id=args["job"],
    )
    loader = StatefulDataLoader(dataset, batch_size=None, num_workers=2)
    loader.load_state_dict(torch.load(args["load"], weights_only=False))
    dataset.skip_batches(args["skip"])
    items = [list(ids) for _samples, _labels, ids in loader]
    with open(args["out"], "w") as f:
        json.dump(items, f)


if __name__ == "__main__":
    main()
