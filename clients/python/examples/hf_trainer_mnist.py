"""The recipe for a Hugging Face Trainer over LoaderDataset.

    python examples/hf_trainer_mnist.py --target localhost:50051 --max-steps 200

Trainer batches what its DataLoader gets and lets accelerate shard an iterable dataset across
processes; LoaderDataset's items are whole batches, already sharded by rank. So the recipe's
Trainer builds the DataLoader itself, with batch_size=None and without accelerate's prepare
(Trainer still moves each batch to the device). Items become the dicts a Trainer model takes.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset
from transformers import Trainer, TrainingArguments

from scylla_loader.torch import LoaderDataset


class AsDicts(IterableDataset[dict[str, torch.Tensor]]):
    """LoaderDataset's ``(images, labels)`` items as ``{"pixel_values", "labels"}``."""

    def __init__(self, dataset: LoaderDataset) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)

    def __iter__(self) -> Iterator[dict[str, torch.Tensor]]:
        for images, labels in self.dataset:
            yield {"pixel_values": images.float() / 255, "labels": labels}


class LoaderTrainer(Trainer):
    """A Trainer whose training DataLoader takes LoaderDataset's batches as they are."""

    def get_train_dataloader(self) -> DataLoader[Any]:
        workers = self.args.dataloader_num_workers
        return DataLoader(self.train_dataset, batch_size=None, num_workers=workers,
                          persistent_workers=workers > 0)


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, pixel_values: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        logits = self.net(pixel_values)
        return {"loss": nn.functional.cross_entropy(logits, labels), "logits": logits}


def train(target: str, split_set: str = "main", max_steps: int = 200, workers: int = 2,
          out: str = "hf-trainer-out") -> LoaderTrainer:
    dataset = LoaderDataset(target, "mnist", f"{split_set}/train", batch_size=128,
                            decode="torchvision", num_workers=workers)
    args = TrainingArguments(out, max_steps=max_steps, learning_rate=2e-3, logging_steps=1,
                             dataloader_num_workers=workers, report_to=[], save_strategy="no",
                             use_cpu=True, disable_tqdm=True)
    trainer = LoaderTrainer(model=Classifier(), args=args, train_dataset=AsDicts(dataset))
    trainer.train()
    return trainer


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="localhost:50051")
    parser.add_argument("--split-set", default="main")
    parser.add_argument("--max-steps", type=int, default=200)
    args = parser.parse_args()
    done = train(args.target, args.split_set, args.max_steps)
    print(f"{done.state.global_step} steps; last loss {done.state.log_history[-2].get('loss')}")
