"""Python client against the TypeScript SDK, and LoaderDataset against torchvision's
ImageFolder, side by side in one run (issue 13's benchmark).

    python bench/client_vs_sdk.py                  # starts a loader; 3 runs of each
    python bench/client_vs_sdk.py --quick          # 1 run of each, under 2 minutes
    python bench/client_vs_sdk.py --target localhost:50051 --dataset mnist --split main/train --no-torch

1. Client: for each `--dataset` (default: `bench stream`'s photo datasets of both payloads,
   `bench_photo_imagenet_n3000`, ~104 kB JPEGs, and `bench_photo_small_n3000`, 224x224
   ~15 kB), each run streams one epoch of the split through the TS SDK (the repository's
   `bench/stream/sdkClientChild.ts`, the child `bench stream` uses) and through `LoaderClient`
   in a Python child, in alternating order, each after an untimed warm-up of a quarter of the
   split, touching every sample.
2. Torch: for each `--image-root` (an ImageFolder tree of the same JPEGs that dataset was
   ingested from; default `.state/bench/photos-imagenet` for the imagenet dataset, as
   `bench stream` writes it), one epoch through `LoaderDataset` (decode="torchvision",
   resize 256 + center crop 224, batches of 64, DataLoader with 2 workers) against
   `ImageFolder` + DataLoader (2 workers, shuffled, same decoding, transform and batch size)
   reading the files from local disk, alternating, each epoch in a fresh process, with the
   workers' start-up in both.

Prints medians of samples/s and MB/s (of the encoded JPEGs) and the ratios. Figures, not a
test: the loader, the database and both clients share the machine, so run it on a quiet one.
A dataset that does not exist is skipped with a note; make it with
`prepare photos --preset small --count 3000 --out DIR` and `ingest bench_photo_small_n3000
--image-folder DIR` (or `bench stream --payload small`).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
# Measure this checkout's package, not whichever one the interpreter's environment installed.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
CHILD_ENV = "SCYLLA_LOADER_BENCH_CHILD"
PREFIX = "@bench "
DEFAULT_DATASETS = ["bench_photo_imagenet_n3000", "bench_photo_small_n3000"]
DEFAULT_IMAGE_ROOTS = {"bench_photo_imagenet_n3000": REPO / ".state" / "bench" / "photos-imagenet"}
TORCH_BATCH = 64
TORCH_WORKERS = 2


def python_child(config: dict[str, Any]) -> dict[str, Any]:
    from scylla_loader import LoaderClient

    request = dict(batch_size=config["batchSize"], epochs=1)
    with LoaderClient(config["address"]) as client:
        for _ in client.stream_batches(config["dataset"], config["split"], seed=config["seed"] + 1_000_000,
                                       rank=0, world_size=config["warmupWorldSize"], **request):
            pass
        samples = nbytes = 0
        cpu0, t0 = time.process_time(), time.perf_counter()
        for batch in client.stream_batches(config["dataset"], config["split"], seed=config["seed"], **request):
            for sample in batch.samples:
                nbytes += len(sample)
            samples += len(batch.samples)
        return {"samples": samples, "bytes": nbytes, "wallSeconds": time.perf_counter() - t0,
                "cpuSeconds": time.process_time() - cpu0}


def run_child(command: list[str], config: dict[str, Any]) -> dict[str, Any]:
    """Starts a child of the bench protocol (settings in the environment, `ready`, `go`,
    `result` lines) and returns its result."""
    child = subprocess.Popen(command, cwd=REPO, env={**os.environ, CHILD_ENV: json.dumps(config)},
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdin and child.stdout
    try:
        for line in child.stdout:
            if not line.startswith(PREFIX):
                continue
            message = json.loads(line[len(PREFIX):])
            if message["type"] == "ready":
                child.stdin.write("go\n")
                child.stdin.flush()
            elif message["type"] == "result":
                return dict(message["result"])
            else:
                raise RuntimeError(f"{command[-1]} failed: {message.get('message')}")
        raise RuntimeError(f"{command[-1]} ended without a result (exit {child.wait()})")
    finally:
        child.stdin.close()
        child.wait(30)


def child_main() -> None:
    config = json.loads(os.environ[CHILD_ENV])
    print(PREFIX + json.dumps({"type": "ready"}), flush=True)
    sys.stdin.readline()
    print(PREFIX + json.dumps({"type": "result", "result": python_child(config)}), flush=True)


class Loader:
    """A `serve` process of this repository on a free port, for a run without `--target`."""

    def __init__(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self.log = tempfile.NamedTemporaryFile(prefix="bench-loader-", suffix=".log", delete=False)
        ready = Path(f"{self.log.name}.ready.json")
        self.process = subprocess.Popen(
            ["node", "--import", "tsx", "src/cli/main.ts", "serve", "--host", "127.0.0.1", "--grpc-port", str(self.port),
             "--metrics-port", "0", "--ready-file", str(ready)],
            cwd=REPO, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"loader exited with {self.process.returncode}; see {self.log.name}")
            if ready.exists():
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"loader did not start within 90 s; see {self.log.name}")

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def describe(target: str, dataset: str) -> Any:
    from scylla_loader import LoaderClient, LoaderError

    with LoaderClient(target) as client:
        try:
            return client.describe_dataset(dataset, timeout=30)
        except LoaderError as error:
            if error.code_name == "NOT_FOUND":
                return None
            raise


def bench_clients(args: argparse.Namespace, target: str, dataset: str) -> dict[str, float]:
    commands = {
        "ts": ["node", "--import", "tsx", "bench/stream/sdkClientChild.ts"],
        "python": [sys.executable, str(Path(__file__).resolve()), "--child"],
    }
    results: dict[str, list[dict[str, Any]]] = {"ts": [], "python": []}
    for run in range(args.runs):
        config = {"address": target, "dataset": dataset, "split": args.split,
                  "batchSize": args.batch_size, "seed": run, "ordering": "out-of-order",
                  "warmupWorldSize": 4}
        for name in (("ts", "python") if run % 2 == 0 else ("python", "ts")):
            r = run_child(commands[name], config)
            results[name].append(r)
            print(f"  {dataset} run {run} {name:6}: {r['samples'] / r['wallSeconds']:8.0f} samples/s "
                  f"{r['bytes'] / 1e6 / r['wallSeconds']:7.1f} MB/s  cpu {r['cpuSeconds']:.2f} s", flush=True)
    out: dict[str, float] = {}
    for name, rs in results.items():
        out[f"{name}_sps"] = statistics.median(r["samples"] / r["wallSeconds"] for r in rs)
        out[f"{name}_mbs"] = statistics.median(r["bytes"] / 1e6 / r["wallSeconds"] for r in rs)
        out[f"{name}_cpu_per_gb"] = statistics.median(r["cpuSeconds"] / (r["bytes"] / 1e9) for r in rs)
    return out


def torch_transform() -> Any:
    from torchvision.transforms import v2

    # Photos of 500-800 px (imagenet) or 224 px (small) to one size, so batches stack.
    return v2.Compose([v2.Resize(256, antialias=True), v2.CenterCrop(224)])


def read_jpeg(path: str) -> Any:
    from torchvision.io import decode_image, read_file

    return decode_image(read_file(path))


def epoch_loader_dataset(target: str, dataset: str, split: str, seed: int) -> tuple[int, float]:
    from torch.utils.data import DataLoader

    from scylla_loader.torch import LoaderDataset

    ds = LoaderDataset(target, dataset, split, batch_size=TORCH_BATCH, seed=seed, decode="torchvision",
                       transform=torch_transform())
    t0 = time.perf_counter()
    samples = 0
    for images, _labels in DataLoader(ds, batch_size=None, num_workers=TORCH_WORKERS):
        samples += int(images.shape[0])
    return samples, time.perf_counter() - t0


def epoch_image_folder(root: Path, seed: int) -> tuple[int, float]:
    import torch
    from torch.utils.data import DataLoader
    from torchvision.datasets import ImageFolder

    ds = ImageFolder(str(root), loader=read_jpeg, transform=torch_transform())
    generator = torch.Generator().manual_seed(seed)
    t0 = time.perf_counter()
    samples = 0
    for images, _labels in DataLoader(ds, batch_size=TORCH_BATCH, shuffle=True, generator=generator,
                                      num_workers=TORCH_WORKERS):
        samples += int(images.shape[0])
    return samples, time.perf_counter() - t0


def torch_epoch_in_child(config: dict[str, Any]) -> tuple[int, float]:
    """One epoch in a fresh process: this one has used grpc (a channel made before the
    DataLoader forks its workers is the trap LoaderDataset avoids), and each side starts cold."""
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--torch-child"], cwd=REPO,
                          env={**os.environ, CHILD_ENV: json.dumps(config)}, capture_output=True,
                          text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith(PREFIX)]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"torch child {config['kind']} failed (exit {done.returncode}): {done.stderr[-2000:]}")
    result = json.loads(lines[-1][len(PREFIX):])
    return int(result["samples"]), float(result["seconds"])


def torch_child_main() -> None:
    config = json.loads(os.environ[CHILD_ENV])
    if config["kind"] == "loader":
        samples, seconds = epoch_loader_dataset(config["target"], config["dataset"], config["split"], config["seed"])
    else:
        samples, seconds = epoch_image_folder(Path(config["root"]), config["seed"])
    print(PREFIX + json.dumps({"samples": samples, "seconds": seconds}), flush=True)


def bench_torch(args: argparse.Namespace, target: str, dataset: str, root: Path,
                mean_bytes: float) -> dict[str, float]:
    folder_bytes = sum(p.stat().st_size for p in root.rglob("*.jpg"))
    folder_files = sum(1 for _ in root.rglob("*.jpg"))
    rates: dict[str, list[tuple[float, float]]] = {"loader": [], "folder": []}
    for run in range(args.runs):
        for name in (("loader", "folder") if run % 2 == 0 else ("folder", "loader")):
            samples, seconds = torch_epoch_in_child(
                {"kind": name, "target": target, "dataset": dataset, "split": args.split,
                 "root": str(root), "seed": run})
            if name == "loader":
                mb = samples * mean_bytes / 1e6
            else:
                mb = folder_bytes * samples / folder_files / 1e6
            rates[name].append((samples / seconds, mb / seconds))
            print(f"  {dataset} torch run {run} {name:6}: {samples} samples in {seconds:.1f} s, "
                  f"{samples / seconds:6.0f} samples/s {mb / seconds:6.1f} MB/s", flush=True)
    return {f"{name}_{k}": statistics.median(r[i] for r in rs)
            for name, rs in rates.items() for i, k in enumerate(("sps", "mbs"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", help="a running loader; default: start one on a free port")
    parser.add_argument("--dataset", action="append", help=f"repeatable; default {' '.join(DEFAULT_DATASETS)}")
    parser.add_argument("--image-root", action="append", default=[], metavar="DATASET=DIR",
                        help="ImageFolder tree a dataset was ingested from, for the torch part; "
                             "default for bench_photo_imagenet_n3000: .state/bench/photos-imagenet")
    parser.add_argument("--split", default="all")
    parser.add_argument("--batch-size", type=int, default=128, help="as `bench stream`")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="1 run of each")
    parser.add_argument("--no-torch", action="store_true", help="the client part only")
    args = parser.parse_args()
    if args.quick:
        args.runs = 1
    datasets = args.dataset or DEFAULT_DATASETS
    roots = dict(DEFAULT_IMAGE_ROOTS)
    for item in args.image_root:
        name, _, folder = item.partition("=")
        roots[name] = Path(folder)
    loader = None if args.target else Loader()
    target = args.target or loader.target  # type: ignore[union-attr]
    rows: list[tuple[str, dict[str, float]]] = []
    torch_rows: list[tuple[str, dict[str, float]]] = []
    started = time.monotonic()
    try:
        for dataset in datasets:
            info = describe(target, dataset)
            if info is None:
                print(f"{dataset}: does not exist, skipped (see --help to make it)")
                continue
            mean = info.total_bytes / info.sample_count
            print(f"{dataset}: {info.sample_count} samples of {mean / 1e3:.1f} kB, split {args.split}", flush=True)
            rows.append((dataset, bench_clients(args, target, dataset)))
            root = roots.get(dataset)
            if args.no_torch:
                continue
            if root is None or not root.is_dir():
                print(f"  {dataset}: no ImageFolder tree (--image-root {dataset}=DIR), torch part skipped")
                continue
            torch_rows.append((dataset, bench_torch(args, target, dataset, root, mean)))
    finally:
        if loader is not None:
            loader.stop()
    load = os.getloadavg()
    print(f"\nmedians of {args.runs} run(s), batch {args.batch_size} (clients) / {TORCH_BATCH} (torch), "
          f"{time.monotonic() - started:.0f} s, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print("| dataset | TS SDK samples/s | MB/s | Python samples/s | MB/s | Python / TS | CPU s/GB TS, Python |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for dataset, r in rows:
        print(f"| {dataset} | {r['ts_sps']:.0f} | {r['ts_mbs']:.0f} | {r['python_sps']:.0f} | "
              f"{r['python_mbs']:.0f} | {r['python_sps'] / r['ts_sps']:.2f}x | "
              f"{r['ts_cpu_per_gb']:.1f}, {r['python_cpu_per_gb']:.1f} |")
    if torch_rows:
        print(f"\n| dataset | LoaderDataset samples/s | MB/s | ImageFolder samples/s | MB/s | LoaderDataset / ImageFolder |")
        print("|---|---:|---:|---:|---:|---:|")
        for dataset, r in torch_rows:
            print(f"| {dataset} | {r['loader_sps']:.0f} | {r['loader_mbs']:.0f} | {r['folder_sps']:.0f} | "
                  f"{r['folder_mbs']:.0f} | {r['loader_sps'] / r['folder_sps']:.2f}x |")


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        child_main()
    elif sys.argv[1:] == ["--torch-child"]:
        torch_child_main()
    else:
        main()
