"""Writes a Hugging Face dataset into the database through a running loader. `--hf NAME` loads
one with datasets.load_dataset (a download); without it, 500 random PNGs are made in memory:
a datasets.Dataset when `datasets` is installed, else (or with --plain) a list of dicts shaped
like its rows. ClassLabel names and scalar columns (as typed metadata) come along.

    python examples/ingest_huggingface.py --target localhost:50051 --dataset hf-small
    python examples/ingest_huggingface.py --target localhost:50051 --dataset beans --hf beans
"""

from __future__ import annotations

import argparse
import io
import random
from typing import Any

from PIL import Image

from scylla_loader import LoaderClient
from scylla_loader.ingest_sources import from_huggingface

CLASSES = ["cat", "dog", "bird"]


def small_dataset(size: int, plain: bool) -> Any:
    rng, rows = random.Random(0), []
    for _ in range(size):
        png = io.BytesIO()
        Image.frombytes("L", (16, 16), rng.randbytes(256)).save(png, format="PNG")
        rows.append({"image": {"bytes": png.getvalue(), "path": None}, "label": rng.randrange(3),
                     "brightness": rng.random(), "camera": rng.choice(["a", "b"])})
    if plain:
        return rows
    try:
        import datasets
    except ImportError:
        return rows
    features = datasets.Features({
        "image": datasets.Image(), "label": datasets.ClassLabel(names=CLASSES),
        "brightness": datasets.Value("float32"), "camera": datasets.Value("string")})
    return datasets.Dataset.from_list(rows, features=features, split="train")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="localhost:50051", help="the loader's host:port")
    parser.add_argument("--dataset", required=True, help="dataset to write (made when absent)")
    parser.add_argument("--hf", help="a Hugging Face dataset name for load_dataset")
    parser.add_argument("--split", default="train")
    parser.add_argument("--plain", action="store_true", help="a list of dicts, not a Dataset")
    args = parser.parse_args()
    if args.hf:
        import datasets

        data = datasets.load_dataset(args.hf, split=args.split)
    else:
        data = small_dataset(500, args.plain)
    # Class names: the ClassLabel's for a Dataset, CLASSES for the list of dicts.
    source = from_huggingface(data, key_prefix=args.split, label_names=None if args.hf else CLASSES)
    with LoaderClient(args.target) as client:
        summary = client.ingest(args.dataset, source, bad_samples="skip")
    print(f"{args.dataset} ({type(data).__name__}): {summary.written} written, "
          f"{summary.already_present} already present, {summary.skipped} skipped; the dataset "
          f"holds {summary.dataset_samples} samples")


if __name__ == "__main__":
    main()
