"""Python client against the TypeScript SDK on the same stream, side by side in one run.

    python bench/client_vs_sdk.py --target localhost:50051 --split main/train --runs 3

Each run streams one epoch of the split through the TS SDK (the repository's
`bench/stream/sdkClientChild.ts`, the child `bench stream` uses) and through `LoaderClient` in
a Python child, in alternating order, each after an untimed warm-up of a quarter of the split,
touching every sample. Prints median samples/s, MB/s and client CPU seconds per GB, and the
Python/TS ratio of samples/s. A figure, not a test: the loader and the database are shared by
both, so run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
CHILD_ENV = "SCYLLA_LOADER_BENCH_CHILD"
PREFIX = "@bench "


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="localhost:50051")
    parser.add_argument("--dataset", default="mnist")
    parser.add_argument("--split", default="main/train")
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    commands = {
        "ts": ["node", "--import", "tsx", "bench/stream/sdkClientChild.ts"],
        "python": [sys.executable, str(Path(__file__).resolve()), "--child"],
    }
    results: dict[str, list[dict[str, Any]]] = {"ts": [], "python": []}
    for run in range(args.runs):
        config = {"address": args.target, "dataset": args.dataset, "split": args.split,
                  "batchSize": args.batch_size, "seed": run, "ordering": "out-of-order",
                  "warmupWorldSize": 4}
        for name in (("ts", "python") if run % 2 == 0 else ("python", "ts")):
            r = run_child(commands[name], config)
            results[name].append(r)
            print(f"run {run} {name:6}: {r['samples'] / r['wallSeconds']:8.0f} samples/s "
                  f"{r['bytes'] / 1e6 / r['wallSeconds']:7.1f} MB/s  cpu {r['cpuSeconds']:.2f} s")
    med = {name: statistics.median(r["samples"] / r["wallSeconds"] for r in rs) for name, rs in results.items()}
    for name, rs in results.items():
        mbs = statistics.median(r["bytes"] / 1e6 / r["wallSeconds"] for r in rs)
        cpu = statistics.median(r["cpuSeconds"] / (r["bytes"] / 1e9) for r in rs)
        print(f"{name:6} median {med[name]:8.0f} samples/s {mbs:7.1f} MB/s  {cpu:6.1f} CPU s/GB")
    print(f"python / ts samples/s: {med['python'] / med['ts']:.2f}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        child_main()
    else:
        main()
