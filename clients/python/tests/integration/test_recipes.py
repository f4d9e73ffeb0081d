"""The trainer recipes of the README run: PyTorch Lightning's LightningDataModule and a Hugging
Face Trainer over LoaderDataset, a few steps of a tiny model each against a real loader."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest
import torch

from .conftest import Mnist
from .loader_process import LoaderProcess

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_lightning_datamodule_recipe_trains_with_an_exact_epoch_length(
    loader: LoaderProcess, mnist: Mnist
) -> None:
    spec = importlib.util.spec_from_file_location("lightning_mnist", EXAMPLES / "lightning_mnist.py")
    assert spec and spec.loader
    example = importlib.util.module_from_spec(spec)
    sys.modules["lightning_mnist"] = example
    spec.loader.exec_module(example)
    split_set = mnist.train.rsplit("/", 1)[0]  # main@<version>
    trainer = example.train(loader.target, split_set, max_steps=6, workers=2)
    assert trainer.global_step == 6
    # Lightning read the epoch's length from len(): 2 worker streams of the train split (pad).
    assert trainer.num_training_batches == 2 * math.ceil(math.ceil(mnist.sizes["train"] / 2) / 128)
    assert torch.isfinite(trainer.callback_metrics["loss"])


def test_the_hugging_face_trainer_recipe_trains_a_few_steps(
    loader: LoaderProcess, mnist: Mnist, tmp_path: Path
) -> None:
    spec = importlib.util.spec_from_file_location("hf_trainer_mnist", EXAMPLES / "hf_trainer_mnist.py")
    assert spec and spec.loader
    example = importlib.util.module_from_spec(spec)
    sys.modules["hf_trainer_mnist"] = example
    spec.loader.exec_module(example)
    split_set = mnist.train.rsplit("/", 1)[0]
    trainer = example.train(loader.target, split_set, max_steps=6, workers=2, out=str(tmp_path))
    assert trainer.state.global_step == 6
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert len(losses) == 6 and all(math.isfinite(loss) for loss in losses)
    # The Trainer read the epoch's length from len(): 6 steps of one epoch of 2 * ceil(...).
    steps_per_epoch = 2 * math.ceil(math.ceil(mnist.sizes["train"] / 2) / 128)
    assert trainer.state.log_history[-1]["epoch"] == pytest.approx(6 / steps_per_epoch, abs=1e-3)
