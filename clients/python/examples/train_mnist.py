"""Trains a small CNN on the demo's MNIST split from a running loader, on CPU.

    scylla-loader demo            # once: ingests MNIST and makes split set `main`
    scylla-loader serve &         # the loader, on localhost:50051
    python examples/train_mnist.py --target localhost:50051

Prints the loss as it goes, the test accuracy, and the share of time the training loop spent
waiting for data.
"""

from __future__ import annotations

import argparse
import logging
import time
from dataclasses import dataclass

import torch
from torch import nn
from torch.utils.data import DataLoader

from scylla_loader.torch import LoaderDataset

MEAN, STD = 0.1307, 0.3081


def build_model() -> nn.Module:
    """Two 5x5 convolutions and a linear layer: ~99% on MNIST after a few epochs, ~98% after one."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10),
    )


def normalise(images: torch.Tensor) -> torch.Tensor:
    """uint8 images as the model's float input (on the batch: cheaper than per sample)."""
    return images.float().div_(255).sub_(MEAN).div_(STD)


@dataclass
class Result:
    accuracy: float
    losses: list[float]
    stall_share: float
    seconds: float


def evaluate(model: nn.Module, target: str, split: str, workers: int) -> tuple[float, int]:
    """Accuracy over the whole split, and the samples it counted. rank=0, world_size=1: this
    process reads every sample even inside a torch.distributed job (ddp_mnist.py's rank 0)."""
    dataset = LoaderDataset(target, "mnist", split, batch_size=1000, shuffle="none",
                            shard_rule="uneven", decode="torchvision", rank=0, world_size=1)
    correct = total = 0
    model.eval()
    with torch.no_grad():
        for images, labels in DataLoader(dataset, batch_size=None, num_workers=workers):
            correct += int((model(normalise(images)).argmax(1) == labels).sum())
            total += len(labels)
    return correct / total, total


def train(target: str, split_set: str = "main", epochs: int = 1, batch_size: int = 128,
          workers: int = 2, seed: int = 0, log_every: int = 50) -> Result:
    torch.manual_seed(seed)
    model = build_model()
    optimiser = torch.optim.Adam(model.parameters(), lr=2e-3)
    loss_fn = nn.CrossEntropyLoss()
    dataset = LoaderDataset(target, "mnist", f"{split_set}/train", batch_size=batch_size,
                            seed=seed, decode="torchvision")
    loader = DataLoader(dataset, batch_size=None, num_workers=workers,
                        persistent_workers=workers > 0)
    losses: list[float] = []
    start = time.perf_counter()
    for epoch in range(epochs):
        dataset.set_epoch(epoch)
        model.train()
        for images, labels in dataset.watch(loader):
            optimiser.zero_grad()
            loss = loss_fn(model(normalise(images)), labels)
            loss.backward()
            optimiser.step()
            losses.append(float(loss))
            if len(losses) % log_every == 0:
                print(f"epoch {epoch} step {len(losses)}: loss {sum(losses[-log_every:]) / log_every:.3f}")
    seconds = time.perf_counter() - start
    accuracy, _ = evaluate(model, target, f"{split_set}/test", workers)
    return Result(accuracy, losses, dataset.stall_seconds / seconds, seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="localhost:50051")
    parser.add_argument("--split-set", default="main")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    result = train(args.target, args.split_set, args.epochs, workers=args.workers)
    print(f"test accuracy {100 * result.accuracy:.2f}% after {args.epochs} epoch(s) in "
          f"{result.seconds:.0f} s; the training loop waited for data "
          f"{100 * result.stall_share:.1f}% of the time")


if __name__ == "__main__":
    main()
