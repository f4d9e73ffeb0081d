"""The recipe for PyTorch Lightning: a LightningDataModule over LoaderDataset.

    python examples/lightning_mnist.py --target localhost:50051 --max-steps 200

The DataLoader takes batch_size=None (the server makes the batches); the dataset is told the
DataLoader's num_workers, so len() (Lightning's progress bar and epoch length) is exact.
Lightning leaves an IterableDataset's sharding to the dataset: under its DDP strategy each
LoaderDataset takes the rank and world size of torch.distributed (pass rank=/world_size= or
process_group= under model parallelism). Lightning calls set_epoch on samplers only; the
dataset needs none: every pass streams the next epoch, with persistent workers or not.
"""

from __future__ import annotations

import argparse

import pytorch_lightning as pl
import torch
from torch import nn
from torch.utils.data import DataLoader

from scylla_loader.torch import LoaderDataset


class MnistData(pl.LightningDataModule):
    def __init__(self, target: str, split_set: str = "main", batch_size: int = 128, workers: int = 2) -> None:
        super().__init__()
        self.target, self.split_set, self.batch_size, self.workers = target, split_set, batch_size, workers

    def _loader(self, part: str, **options: object) -> DataLoader:
        dataset = LoaderDataset(self.target, "mnist", f"{self.split_set}/{part}",
                                batch_size=self.batch_size, decode="torchvision",
                                num_workers=self.workers, **options)  # type: ignore[arg-type]
        return DataLoader(dataset, batch_size=None, num_workers=self.workers,
                          persistent_workers=self.workers > 0)

    def train_dataloader(self) -> DataLoader:
        return self._loader("train")

    def val_dataloader(self) -> DataLoader:
        # Every sample once, in order, the same on every rank's run.
        return self._loader("val", shard_rule="uneven", shuffle="none")


class Classifier(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.net(images.float() / 255)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], _index: int) -> torch.Tensor:
        images, labels = batch
        loss = nn.functional.cross_entropy(self(images), labels)
        self.log("loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], _index: int) -> None:
        images, labels = batch
        self.log("val_accuracy", (self(images).argmax(1) == labels).float().mean())

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=2e-3)


def train(target: str, split_set: str = "main", max_steps: int = 200, workers: int = 2) -> pl.Trainer:
    trainer = pl.Trainer(max_steps=max_steps, accelerator="cpu", devices=1, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         limit_val_batches=2, num_sanity_val_steps=0)
    trainer.fit(Classifier(), datamodule=MnistData(target, split_set, workers=workers))
    return trainer


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="localhost:50051")
    parser.add_argument("--split-set", default="main")
    parser.add_argument("--max-steps", type=int, default=200)
    args = parser.parse_args()
    done = train(args.target, args.split_set, args.max_steps)
    print(f"{done.global_step} steps; {dict(done.callback_metrics)}")
