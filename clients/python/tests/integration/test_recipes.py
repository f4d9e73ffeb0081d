"""The trainer recipes of the README run: PyTorch Lightning's LightningDataModule and a Hugging
Face Trainer over LoaderDataset, a few steps of a tiny model each against a real loader."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from .conftest import Mnist
from .loader_process import LoaderProcess

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(name: str) -> Any:
    """examples/<name>.py as a module (registered, as its dataclasses and pickling need)."""
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_the_lightning_datamodule_recipe_trains_with_an_exact_epoch_length(
    loader: LoaderProcess, mnist: Mnist
) -> None:
    split_set = mnist.train.rsplit("/", 1)[0]  # main@<version>
    trainer = example("lightning_mnist").train(loader.target, split_set, max_steps=6, workers=2)
    assert trainer.global_step == 6
    # Lightning read the epoch's length from len(): 2 worker streams of the train split (pad).
    assert trainer.num_training_batches == 2 * math.ceil(math.ceil(mnist.sizes["train"] / 2) / 128)
    assert torch.isfinite(trainer.callback_metrics["loss"])


def test_the_hugging_face_trainer_recipe_trains_a_few_steps(
    loader: LoaderProcess, mnist: Mnist, tmp_path: Path
) -> None:
    split_set = mnist.train.rsplit("/", 1)[0]
    trainer = example("hf_trainer_mnist").train(loader.target, split_set, max_steps=6, workers=2, out=str(tmp_path))
    assert trainer.state.global_step == 6
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert len(losses) == 6 and all(math.isfinite(loss) for loss in losses)
    # The Trainer read the epoch's length from len(): 6 steps of one epoch of 2 * ceil(...).
    steps_per_epoch = 2 * math.ceil(math.ceil(mnist.sizes["train"] / 2) / 128)
    assert trainer.state.log_history[-1]["epoch"] == pytest.approx(6 / steps_per_epoch, abs=1e-3)
