"""One leg of `bench transform` (issue 14's benchmark), as a child of the TypeScript runner
(`bench/transform/runTransformBench.ts`), which starts the loader, runs every leg interleaved,
measures the loader's CPU and prints the table.

    SCYLLA_LOADER_BENCH_CHILD='{"leg": "server", ...}' python bench/transform_legs.py

The settings arrive as JSON in SCYLLA_LOADER_BENCH_CHILD; the child speaks the protocol of the
repository's bench children (`bench/stream/childProtocol.ts`): stdout lines prefixed `@bench `,
`ready` once set up, then it waits for `go` on stdin, does the measured work and reports one
`result` (or an `error`). Legs:

- `server`: `LoaderClient` streams `epochs` epochs of split `all` with the server-side
  `transform` of the settings (proto JSON, camelCase, as the TS runner types it), turning each
  RAW batch into a torch ``uint8`` NCHW view (``batch.tensor()``, permuted), or counting the re-encoded samples of a JPEG/WebP one. Before `ready`,
  untimed: a quarter of the split with the same transform (another seed), so the loader's
  decoder and this process are warm.
- `pil`: `LoaderDataset(decode="pil")` streams the bytes as stored; RandomResizedCrop(224) and
  RandomHorizontalFlip of torchvision.transforms on the PIL image; a DataLoader with `workers`
  workers.
- `v2`: `LoaderDataset(decode="torchvision")` (decode_jpeg to a uint8 CHW tensor), then the
  same two transforms of torchvision.transforms.v2 on the tensor; same DataLoader.
- `dataset`: `LoaderDataset(decode=None)` in the same DataLoader, with no transform in Python:
  the bytes as stored, or (with a `transform` in the settings) the server's transform as raw
  uint8 NCHW tensors. Its Python CPU is the package's own cost per sample on the trainer side.

Result: images, wall seconds from `go` to the last batch, CPU seconds of this process's tree
from `go` until every DataLoader worker has exited (own user+system, all threads, plus that of
the reaped workers), and response bytes: each batch's data, ids and resume token (over 99% of
the message; labels and size varints add a few bytes per image).
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
CHILD_ENV = "SCYLLA_LOADER_BENCH_CHILD"
PREFIX = "@bench "
# Measure this checkout's package, not whichever one the interpreter's environment installed.
sys.path.insert(0, str(PACKAGE_ROOT / "src"))


def send(message: dict[str, Any]) -> None:
    print(PREFIX + json.dumps(message), flush=True)


def wait_for_go() -> None:
    send({"type": "ready"})
    line = sys.stdin.readline()
    if not line:  # the parent is gone
        sys.exit(3)


def tree_cpu_seconds() -> float:
    """User + system CPU seconds of this process (every thread) and of its reaped children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def wire_bytes(batch: Any) -> int:
    # A masks leg's masks are response bytes too (empty otherwise).
    return len(batch.data) + len(batch.id_bytes) + len(batch.resume_token) + len(batch.masks)


def as_tensor(batch: Any) -> Any:
    """A RAW batch as a torch uint8 NCHW view over the received bytes (no copy), as a trainer
    hands it to its model."""
    return batch.tensor().permute(0, 3, 1, 2)


def server_stream(client: Any, config: dict[str, Any], *, seed: int, epochs: int, rank: int = 0,
                  world_size: int = 1) -> Iterator[Any]:
    """The client's own stream (resumption and batch decoding included) with the transform of
    the settings on the request."""
    from google.protobuf import json_format

    from scylla_loader.client import BatchStream
    from scylla_loader.request import build_request
    from scylla_loader.v1 import loader_pb2

    request = build_request(dataset=config["dataset"], split="all", batch_size=config["batchSize"], seed=seed,
                            epochs=epochs, rank=rank, world_size=world_size)
    request.transform.CopyFrom(json_format.ParseDict(config["transform"], loader_pb2.Transform()))
    return BatchStream(client, request, None, None)


def leg_server(config: dict[str, Any]) -> dict[str, Any]:
    from scylla_loader import LoaderClient

    raw = config["transform"].get("output", "TRANSFORM_OUTPUT_RAW") in ("TRANSFORM_OUTPUT_RAW",
                                                                        "TRANSFORM_OUTPUT_UNSPECIFIED")
    if raw:
        import torch  # noqa: F401  (imported before `go`, as a trainer has it loaded)
    with LoaderClient(config["address"]) as client:
        for _ in server_stream(client, config, seed=config["seed"] + 1_000_000, epochs=1, rank=0, world_size=4):
            pass
        wait_for_go()
        images = nbytes = skipped = 0
        shape: list[int] = []
        cpu0, t0 = tree_cpu_seconds(), time.perf_counter()
        for batch in server_stream(client, config, seed=config["seed"], epochs=config["epochs"]):
            nbytes += wire_bytes(batch)
            skipped += int(getattr(batch, "skipped_undecodable", 0))
            if raw:
                tensor = as_tensor(batch)
                images += int(tensor.shape[0])
                shape = list(tensor.shape)
            else:
                images += len(batch.samples)
        wall = time.perf_counter() - t0
        cpu = tree_cpu_seconds() - cpu0
    return {"images": images, "wallSeconds": wall, "cpuSeconds": cpu, "wireBytes": nbytes,
            "skippedUndecodable": skipped, "lastShape": shape}


def python_transform(leg: str) -> Any:
    if leg == "pil":
        from torchvision import transforms

        return transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip()])
    from torchvision.transforms import v2

    return v2.Compose([v2.RandomResizedCrop(224, antialias=True), v2.RandomHorizontalFlip()])


def leg_dataloader(config: dict[str, Any]) -> dict[str, Any]:
    """The Python path. No grpc channel is made in this process before the workers fork (the
    dataset makes its client in each worker)."""
    import torch

    from scylla_loader.torch import LoaderDataset

    leg = config["leg"]
    dataset = LoaderDataset(config["address"], config["dataset"], "all", batch_size=config["batchSize"],
                            seed=config["seed"], decode="pil" if leg == "pil" else "torchvision",
                            transform=python_transform(leg))
    torch.manual_seed(config["seed"])
    wait_for_go()
    images, _, shape, wall, cpu = dataloader_epochs(dataset, config)
    # The leg streamed the bytes as stored; the workers received them, so the parent cannot
    # count them: the runner takes the dataset's mean sample size instead.
    return {"images": images, "wallSeconds": wall, "cpuSeconds": cpu, "wireBytes": None,
            "skippedUndecodable": 0, "lastShape": shape}


def dataloader_epochs(dataset: Any, config: dict[str, Any]) -> tuple[int, int, list[int], float, float]:
    """`epochs` passes of a DataLoader with `workers` workers over `dataset`, timed from here:
    images, bytes of the items (a tensor's, or a list of bytes' own, plus a 16-byte id per
    image), the last item's shape (a list's length for bytes), wall and CPU seconds of this
    process's tree."""
    import torch
    from torch.utils.data import DataLoader

    images = nbytes = 0
    shape: list[int] = []
    cpu0, t0 = tree_cpu_seconds(), time.perf_counter()
    for epoch in range(config["epochs"]):
        dataset.set_epoch(epoch)
        loader = iter(DataLoader(dataset, batch_size=None, num_workers=config["workers"]))
        for samples, _labels in loader:
            if isinstance(samples, torch.Tensor):
                n = int(samples.shape[0])
                nbytes += samples.numel() * samples.element_size()
                shape = list(samples.shape)
            else:
                n = len(samples)
                nbytes += sum(len(x) for x in samples)
                shape = [n]
            images += n
            nbytes += 16 * n
        # An exhausted iterator has joined (reaped) its workers, so their CPU is in this
        # process's children times.
        del loader
    return images, nbytes, shape, time.perf_counter() - t0, tree_cpu_seconds() - cpu0


def leg_dataset(config: dict[str, Any]) -> dict[str, Any]:
    """The trainer side of a LoaderDataset as a training loop has it: a DataLoader with
    `workers` workers over the bytes as stored (``decode=None``: a list of bytes and a label
    tensor per batch), or over the server's transform with raw output (a uint8 NCHW tensor per
    batch); nothing is decoded or augmented in Python, so the leg's Python CPU is what the
    package costs (its gRPC receive, the batch's decoding into items, the workers' hand-over to
    the main process)."""
    from scylla_loader import RandomResizedCrop, Transform
    from scylla_loader.torch import LoaderDataset

    spec = config.get("transform")
    server_transform = None
    if spec is not None:
        crop = spec["randomResizedCrop"]
        server_transform = Transform(
            channels=spec["channels"],
            random_resized_crop=RandomResizedCrop(crop["height"], crop["width"]),
            horizontal_flip=spec["horizontalFlip"],
            interpolation="bilinear",
            output="raw",
            bad_image="fail",
        )
    dataset = LoaderDataset(config["address"], config["dataset"], "all", batch_size=config["batchSize"],
                            seed=config["seed"], decode=None, server_transform=server_transform,
                            raw_layout="NCHW" if server_transform is not None else "NHWC")
    wait_for_go()
    images, nbytes, shape, wall, cpu = dataloader_epochs(dataset, config)
    # Bytes as the items carry them plus a 16-byte id per image (the ids and resume tokens
    # stay in the workers).
    return {"images": images, "wallSeconds": wall, "cpuSeconds": cpu, "wireBytes": nbytes,
            "skippedUndecodable": 0, "lastShape": shape}


def main() -> None:
    raw = os.environ.get(CHILD_ENV)
    if not raw:
        print(f"{CHILD_ENV} is not set: this script is run by `bench transform`", file=sys.stderr)
        sys.exit(2)
    config = json.loads(raw)
    try:
        if config["leg"] == "server":
            result = leg_server(config)
        elif config["leg"] in ("pil", "v2"):
            result = leg_dataloader(config)
        elif config["leg"] == "dataset":
            result = leg_dataset(config)
        else:
            raise ValueError(f"unknown leg {config['leg']!r}: use server, pil, v2 or dataset")
    except BaseException as error:  # noqa: BLE001  (reported to the parent, then exit 1)
        if isinstance(error, SystemExit):
            raise
        send({"type": "error", "message": traceback.format_exc()})
        sys.exit(1)
    send({"type": "result", "result": result})


if __name__ == "__main__":
    main()
