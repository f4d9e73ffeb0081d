"""Writes a torchvision dataset into the database through a running loader (no database
credentials here): an ImageFolder tree given on the command line (each file stored as it is,
class names from the folder names), or torchvision's FakeData (random images encoded as PNG).
Nothing is downloaded. Run it again and every sample is found already stored.

    python examples/ingest_torchvision.py --target localhost:50051 --dataset fake-images
    python examples/ingest_torchvision.py --target localhost:50051 --dataset pets --image-folder ~/pets/train
"""

from __future__ import annotations

import argparse
import time

from torchvision.datasets import FakeData, ImageFolder

from scylla_loader import IngestProgress, LoaderClient
from scylla_loader.ingest_sources import from_torchvision


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="localhost:50051", help="the loader's host:port")
    parser.add_argument("--dataset", required=True, help="dataset to write (made when absent)")
    parser.add_argument("--image-folder", help="root of an ImageFolder tree; default: FakeData")
    parser.add_argument("--size", type=int, default=1000, help="FakeData images (default 1000)")
    parser.add_argument("--key-prefix", default="train", help="source keys are <prefix>/<index>")
    args = parser.parse_args()

    if args.image_folder:
        data = ImageFolder(args.image_folder)
    else:
        data = FakeData(size=args.size, image_size=(3, 32, 32), num_classes=10, random_offset=0)
    source = from_torchvision(data, key_prefix=args.key_prefix)
    started = time.monotonic()

    def show(progress: IngestProgress) -> None:
        print(f"\r{progress.acknowledged}/{len(source)} samples stored", end="", flush=True)

    with LoaderClient(args.target) as client:
        summary = client.ingest(args.dataset, source, on_progress=show)
    seconds = time.monotonic() - started
    print(f"\n{args.dataset}: {summary.written} written, {summary.already_present} already "
          f"present, {summary.skipped} skipped in {seconds:.1f} s; the dataset holds "
          f"{summary.dataset_samples} samples")


if __name__ == "__main__":
    main()
