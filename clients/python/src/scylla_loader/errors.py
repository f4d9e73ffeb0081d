"""The one error type of the client."""

from __future__ import annotations

from typing import Any

import grpc

from .security import TOKEN_FUNCTION_FAILED


class LoaderError(Exception):
    """A call that ended with a gRPC status other than OK, or a response the client could not
    decode. ``str(error)`` names the method, the target and the status, e.g.
    ``StreamBatches on localhost:50051 NOT_FOUND: dataset 'nope' does not exist``.

    Attributes:
        method: The RPC's name, e.g. ``StreamBatches``.
        target: The address the client was made for.
        code: The gRPC status code.
        details: The status details: the server's message, or grpc's own.
    """

    def __init__(
        self,
        method: str,
        target: str,
        code: grpc.StatusCode,
        details: str,
        *,
        note: str = "",
    ) -> None:
        self.method = method
        self.target = target
        self.code = code
        self.details = details
        self.note = note
        suffix = f" ({note})" if note else ""
        super().__init__(f"{method} on {target} {code.name}: {details}{suffix}")

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickles (a call made in a child process, see torch/isolated.py) with its fields.
        return (_rebuild, (self.method, self.target, self.code.name, self.details, self.note))

    @property
    def code_name(self) -> str:
        """The status code's name, e.g. ``UNAVAILABLE``."""
        return self.code.name


def _rebuild(method: str, target: str, code: str, details: str, note: str) -> LoaderError:
    return LoaderError(method, target, grpc.StatusCode[code], details, note=note)


def from_rpc_error(error: grpc.RpcError, method: str, target: str) -> LoaderError:
    """Wraps a grpc error (which is also a ``grpc.Call`` for a status) in a :class:`LoaderError`."""
    code_fn = getattr(error, "code", None)
    details_fn = getattr(error, "details", None)
    code = (code_fn() if callable(code_fn) else None) or grpc.StatusCode.UNKNOWN
    details = (details_fn() if callable(details_fn) else str(error)) or ""
    if code == grpc.StatusCode.UNAVAILABLE and TOKEN_FUNCTION_FAILED in details:
        # grpc reports a failed call-credentials plugin as UNAVAILABLE, which a reconnect
        # loop would retry: a broken token function is an authentication failure, raised at
        # once, with grpc's "Getting metadata from plugin failed with error:" prefix dropped.
        code = grpc.StatusCode.UNAUTHENTICATED
        details = details[details.index(TOKEN_FUNCTION_FAILED):]
    result = LoaderError(method, target, code, details)
    result.__cause__ = error
    return result
