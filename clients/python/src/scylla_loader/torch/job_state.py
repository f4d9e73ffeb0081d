"""One job state from the states of every rank's DataLoader workers, loadable at any world size
and worker count."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..checkpoint import RankState, merge_resume_tokens

JOB_STATE_KIND = "scylla_loader.job"
JOB_STATE_VERSION = 1
_WORKER_KEYS = {"version", "stream", "epoch", "resume_token", "epoch_done"}


def find_worker_states(state: Any) -> list[Mapping[str, Any]]:
    """The :class:`LoaderDataset` worker states inside ``state``: one worker state, a list of
    them, or any nesting of dicts and lists holding them, such as a ``StatefulDataLoader``
    state dict (its per-worker snapshots), found by their keys rather than by the loader's
    internal layout."""
    found: list[Mapping[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            if _WORKER_KEYS <= node.keys() and isinstance(node.get("stream"), str):
                found.append(node)
                return
            for value in node.values():
                walk(value)
        elif isinstance(node, (list, tuple)):
            for value in node:
                walk(value)

    walk(state)
    return found


def merge_states(states: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Merges the worker states of every rank of a job (every DataLoader worker of every
    data-parallel rank, e.g. gathered with ``all_gather_object``) into one job state: the epoch
    to continue and a job checkpoint of what each stream delivered of it. Load it with
    :meth:`LoaderDataset.load_job_state` at any world size and worker count.

    A worker whose epoch is complete counts as done with it; if every worker is, the job state
    is simply the next epoch. The job state keeps the workers' ``job_id`` (the training
    ledger's name; ``None`` without one). States of different jobs (dataset, split, seed,
    batch size, rules, transform, job id), a stream missing or twice, workers in different
    epochs, or a worker still about to skip batches (:meth:`LoaderDataset.skip_batches`) are a
    ValueError.
    """
    workers = [dict(s) for s in states]
    if not workers:
        raise ValueError("no worker states to merge")
    if any(w.get("epoch") is None for w in workers):
        raise ValueError(
            "a worker state has not started an epoch: take the job state once every "
            "DataLoader worker of every rank has delivered an item"
        )
    jobs = {w.get("job", _job_of(w["stream"])) for w in workers}
    if len(jobs) != 1:
        raise ValueError(f"the states belong to different jobs: {sorted(jobs)!r:.400}")
    job = jobs.pop()
    job_ids = {w.get("job_id") for w in workers}
    if len(job_ids) != 1:
        raise ValueError(f"the states name different job ids: {sorted(map(repr, job_ids))}")
    sizes = {int(w["world_size"]) for w in workers if "world_size" in w} or {len(workers)}
    if len(sizes) != 1 or any("rank" not in w for w in workers):
        raise ValueError(
            "worker states lack or disagree on their stream rank and world size (states "
            "saved before job checkpoints existed cannot be merged)"
        )
    skipping = [w for w in workers if w.get("skip_batches") is not None]
    if skipping:
        # Its token is from before the skip: a job checkpoint of it would deliver the skipped
        # samples again.
        raise ValueError(
            f"the worker state of stream rank {skipping[0].get('rank')} still has batches "
            f"{skipping[0]['skip_batches'][0]} to {skipping[0]['skip_batches'][1]} to skip "
            "(taken before the skipping stream's first item): take the job state once it "
            "delivered one"
        )
    world_size = sizes.pop()
    state: dict[str, Any] = {
        "version": JOB_STATE_VERSION,
        "kind": JOB_STATE_KIND,
        "job": job,
        "job_id": job_ids.pop(),
        "epoch": 0,
        "job_checkpoint": None,
    }
    if all(w["epoch_done"] for w in workers):
        done = {int(w["epoch"]) for w in workers}
        if len(done) != 1:
            raise ValueError(f"workers completed different epochs {sorted(done)}")
        state["epoch"] = done.pop() + 1
        return state
    # A worker done with its epoch holds its last batch's token, which says so (the epoch
    # after, nothing delivered of it); a worker without a token delivered nothing yet.
    entries = [
        (
            int(w["rank"]),
            int(w["epoch"]) + (1 if w["epoch_done"] and w.get("resume_token") else 0),
            w.get("resume_token"),
            w.get("job_checkpoint"),
        )
        for w in workers
    ]
    epoch = min(e[1] for e in entries)
    started_ahead = [w for w, e in zip(workers, entries) if e[1] > epoch and not w["epoch_done"]]
    if started_ahead or any(e[1] > epoch + 1 for e in entries):
        raise ValueError(
            f"workers are in different epochs (from {epoch} to {max(e[1] for e in entries)}): "
            "take the job state where every rank is in the same epoch, e.g. at a training step"
        )
    state["epoch"] = epoch
    if not any(e[2] or e[3] for e in entries):
        return state  # nothing delivered of the epoch: it starts afresh, at any world size
    bases = {bytes(e[3]) for e in entries if e[3]}
    if len(bases) > 1:
        raise ValueError("workers of this epoch were started from different job checkpoints")
    state["job_checkpoint"] = merge_resume_tokens(
        world_size,
        (RankState(rank=e[0], resume_token=e[2], epoch=e[1]) for e in entries),
        base=bases.pop() if bases else None,
    )
    return state


def _job_of(stream: str) -> str:
    """A stream key without its rank: what every stream of one job shares."""
    return "|".join(part for part in stream.split("|") if not part.startswith("rank "))
