"""Streams one epoch of a split with nothing but the installed wheel and its dependencies (run
by test_wheel.py in a bare venv): `python wheel_smoke.py TARGET DATASET SPLIT`. Prints a JSON
line: samples, distinct ids, labels seen, and the grpc and protobuf versions it ran on."""

import json
import sys

import grpc
from google.protobuf import __version__ as protobuf_version

from scylla_loader import LoaderClient

target, dataset, split = sys.argv[1:4]
ids: set[str] = set()
samples = 0
labels: set[int] = set()
with LoaderClient(target) as client:
    for batch in client.stream_batches(dataset, split, batch_size=512, shard_rule="uneven"):
        samples += len(batch)
        ids.update(batch.ids)
        labels.update(int(x) for x in batch.labels)
print(json.dumps({"samples": samples, "ids": len(ids), "labels": sorted(labels),
                  "grpc": grpc.__version__, "protobuf": protobuf_version}))
