"""The small CNN of train_mnist.py trained data-parallel: 2 processes, gloo backend, CPU.

    python examples/ddp_mnist.py --target localhost:50051

Each process is one rank; its LoaderDataset takes rank and world size from torch.distributed,
and its 2 DataLoader workers stream their own shares (the `pad` rule gives every rank the same
number of steps, so no rank waits at an epoch's end for a gradient that never comes).
"""

from __future__ import annotations

import argparse
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader

from scylla_loader.torch import LoaderDataset

try:
    from train_mnist import build_model, evaluate, normalise
except ImportError:  # imported as examples.ddp_mnist
    from .train_mnist import build_model, evaluate, normalise


def run(rank: int, world: int, port: int, target: str, split_set: str, epochs: int,
        max_steps: int) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.set_num_threads(1)
    torch.manual_seed(0)  # same initial weights on every rank
    model = DistributedDataParallel(build_model())
    optimiser = torch.optim.Adam(model.parameters(), lr=2e-3)
    loss_fn = nn.CrossEntropyLoss()
    dataset = LoaderDataset(target, "mnist", f"{split_set}/train", batch_size=64, seed=0,
                            decode="torchvision")
    loader = DataLoader(dataset, batch_size=None, num_workers=2, persistent_workers=True)
    for epoch in range(epochs):
        dataset.set_epoch(epoch)
        steps = 0
        for images, labels in dataset.watch(loader):
            optimiser.zero_grad()
            loss_fn(model(normalise(images)), labels).backward()
            optimiser.step()
            steps += 1
            if steps == max_steps:
                break
        waited = dataset.epoch_stall_seconds / dataset.epoch_seconds if steps != max_steps else 0
        print(f"rank {rank} epoch {epoch}: {steps} steps, waited for data "
              f"{100 * waited:.1f}% of the time")
    if rank == 0:
        # The whole test split on rank 0 (evaluate reads it as rank 0 of 1) while the other
        # rank waits at the barrier.
        accuracy, samples = evaluate(model.module, target, f"{split_set}/test", workers=2)
        print(f"test accuracy {100 * accuracy:.2f}% over {samples} samples", flush=True)
    dist.barrier()
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="localhost:50051")
    parser.add_argument("--split-set", default="main")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--max-steps", type=int, default=0, help="steps per epoch at most (0: all)")
    args = parser.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(run, args=(args.world_size, port, args.target, args.split_set, args.epochs,
                       args.max_steps),
             nprocs=args.world_size)


if __name__ == "__main__":
    main()
