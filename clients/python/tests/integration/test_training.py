"""Real training: the example's CNN on the MNIST train split, one epoch on CPU."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

from .conftest import Mnist
from .loader_process import LoaderProcess

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_mnist.py"


def test_one_epoch_of_the_example_cnn_reaches_97_percent(loader: LoaderProcess, mnist: Mnist) -> None:
    spec = importlib.util.spec_from_file_location("train_mnist", EXAMPLE)
    assert spec and spec.loader
    example = importlib.util.module_from_spec(spec)
    sys.modules["train_mnist"] = example  # its dataclass looks its module up
    spec.loader.exec_module(example)
    split_set = mnist.train.rsplit("/", 1)[0]  # main@<version>
    result = example.train(loader.target, split_set=split_set, epochs=1, workers=2)
    steps = len(result.losses)
    assert steps == 2 * math.ceil(math.ceil(mnist.sizes["train"] / 2) / 128)  # 2 workers, pad
    first, last = result.losses[:50], result.losses[-50:]
    assert sum(last) / 50 < 0.5 * sum(first) / 50, "the loss falls"
    assert result.accuracy >= 0.97, f"test accuracy {result.accuracy:.4f}"
    assert 0 <= result.stall_share < 1
