"""Job checkpoints: the resume tokens of every rank of a job, merged, to continue at any world
size."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .v1 import loader_pb2

UINT32_MAX = 2**32 - 1


@dataclass(frozen=True)
class RankState:
    """One rank's part of a job checkpoint: the ``resume_token`` of the last batch it consumed
    (``None`` when it got none yet) and, for a rank without a token, the epoch it is in."""

    rank: int
    resume_token: bytes | None = None
    epoch: int = 0


def merge_resume_tokens(
    world_size: int, ranks: Iterable[RankState], *, base: bytes | None = None
) -> bytes:
    """Merges the tokens of every rank of a job (world size ``world_size``) into a job
    checkpoint: pass it as ``job_checkpoint`` to streams of the same job at any world size, and
    together they deliver exactly the samples of the epoch the old ranks had not, then later
    epochs in full. ``base`` is the ``job_checkpoint`` these ranks were started with, if any
    (it is kept while a rank is still in the epoch it re-sharded, and dropped after).

    The server validates the result (each token's HMAC, the same job, every rank once, one
    epoch) and answers INVALID_ARGUMENT naming what is wrong; what is visible here (a rank
    missing, twice or out of range) is a ValueError. The checkpoint is about as large as the
    tokens, whatever the dataset's size.
    """
    if (
        isinstance(world_size, bool)
        or not isinstance(world_size, int)
        or not 1 <= world_size <= UINT32_MAX
    ):
        raise ValueError(f"world_size must be an integer of at least 1, got {world_size!r}")
    entries: dict[int, RankState] = {}
    for state in ranks:
        if not 0 <= state.rank < world_size:
            raise ValueError(f"rank {state.rank} is outside world size {world_size}")
        if state.rank in entries:
            raise ValueError(f"rank {state.rank} is given twice")
        if not 0 <= state.epoch <= UINT32_MAX:
            raise ValueError(f"epoch {state.epoch} of rank {state.rank} is out of range")
        entries[state.rank] = state
    missing = [r for r in range(world_size) if r not in entries]
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (", ..." if len(missing) > 10 else "")
        raise ValueError(
            f"ranks {shown} of world size {world_size} are missing: a job checkpoint needs "
            "every rank (and every DataLoader worker)"
        )
    checkpoint = loader_pb2.JobCheckpoint(world_size=world_size)
    for rank in range(world_size):
        state = entries[rank]
        checkpoint.ranks.add(
            rank=rank, epoch=state.epoch, resume_token=bytes(state.resume_token or b"")
        )
    if base and any(not s.resume_token or _has_base(s.resume_token) for s in entries.values()):
        checkpoint.base = bytes(base)
    return checkpoint.SerializeToString()


def _has_base(token: bytes) -> bool:
    """Whether a token continues an epoch re-sharded from a job checkpoint: version 2 tokens
    hold that checkpoint's digest (zero when none) after version, job fingerprint, rank and
    world size."""
    return len(token) >= 41 and token[0] == 2 and any(token[25:41])
