"""Which broken streams are resumed, and how."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files
from typing import Any, Literal

import grpc


@dataclass(frozen=True)
class ReconnectPolicy:
    """How a broken stream is resumed (see :meth:`LoaderClient.stream_batches`).

    Attributes:
        attempts: Reconnection attempts in a row without receiving a batch before the stream
            fails with the last error; a received batch resets the count. 0 turns
            reconnection off.
        initial_backoff: Seconds before the first attempt, doubled for each further one (with
            jitter).
        max_backoff: Cap of the delay between attempts, in seconds.
        retry_on_resource_exhausted: Also resume after RESOURCE_EXHAUSTED, which a loader
            returns when it already serves as many streams as it admits.
    """

    attempts: int = 10
    initial_backoff: float = 0.1
    max_backoff: float = 5.0
    retry_on_resource_exhausted: bool = True

    def __post_init__(self) -> None:
        if self.attempts < 0:
            raise ValueError(f"attempts must be 0 or more, got {self.attempts}")
        if not (0 < self.initial_backoff <= self.max_backoff):
            raise ValueError(
                "backoffs must satisfy 0 < initial_backoff <= max_backoff, got "
                f"{self.initial_backoff} and {self.max_backoff}"
            )


_Match = Literal["prefix", "contains", "equals"]
_MATCHES: tuple[_Match, ...] = ("prefix", "contains", "equals")


@dataclass(frozen=True)
class RetryRule:
    """One rule of ``retry_rules.json``: a status code, optionally a test of its details
    (``match`` applied to ``text``), and what to do.

    :meta private:
    """

    code: grpc.StatusCode
    match: _Match | None
    text: str
    retry: bool | Literal["when-resource-exhausted-allowed"]

    def matches(self, code: grpc.StatusCode, details: str) -> bool:
        if code != self.code:
            return False
        if self.match == "prefix":
            return details.startswith(self.text)
        if self.match == "contains":
            return self.text in details
        if self.match == "equals":
            return details == self.text
        return True


def _parse_rule(row: dict[str, Any]) -> RetryRule:
    code = grpc.StatusCode[row["code"]]
    retry = row["retry"]
    if not (isinstance(retry, bool) or retry == "when-resource-exhausted-allowed"):
        raise ValueError(f"retry_rules.json: bad retry {retry!r} for {row['code']}")
    detail: dict[str, str] = row.get("detail", {})
    kinds = [kind for kind in _MATCHES if kind in detail]
    if len(kinds) != len(detail) or len(kinds) > 1:
        raise ValueError(f"retry_rules.json: bad detail {detail!r} for {row['code']}")
    if not kinds:
        return RetryRule(code, None, "", retry)
    return RetryRule(code, kinds[0], detail[kinds[0]], retry)


def load_retry_table() -> dict[str, Any]:
    """The parsed ``retry_rules.json`` shipped in this package (rules and example cases), the
    same table the TypeScript SDK evaluates.

    :meta private:
    """
    text = files("scylla_loader").joinpath("retry_rules.json").read_text(encoding="utf-8")
    table: dict[str, Any] = json.loads(text)
    return table


RETRY_RULES: tuple[RetryRule, ...] = tuple(_parse_rule(row) for row in load_retry_table()["rules"])
"""The rules of ``retry_rules.json``, in order. :meta private:"""


def is_retryable(code: grpc.StatusCode, details: str, retry_on_resource_exhausted: bool) -> bool:
    """Whether a broken stream is worth resuming from its last token: only statuses that say
    the connection or the loader went away, never one about the request itself
    (INVALID_ARGUMENT, NOT_FOUND, DATA_LOSS, DEADLINE_EXCEEDED, UNAUTHENTICATED...), which a
    new call would meet again. The caller checks first whether it cancelled the call itself.

    Decided by the first matching rule of ``retry_rules.json`` (shared with the TypeScript
    SDK, each rule says why): UNAVAILABLE; CANCELLED unless grpc itself says this process
    cancelled the call or closed the channel; INTERNAL from an HTTP/2 RST_STREAM;
    RESOURCE_EXHAUSTED when ``retry_on_resource_exhausted``, except grpc's message size
    limits. Anything else is not retried.
    """
    for rule in RETRY_RULES:
        if rule.matches(code, details):
            if rule.retry == "when-resource-exhausted-allowed":
                return retry_on_resource_exhausted
            return rule.retry
    return False
