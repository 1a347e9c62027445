"""Helpers that let one test body drive the sync and the async client alike."""

from __future__ import annotations

import enum
import time
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Iterable
from typing import Any, TypedDict, TypeVar

from paddock import AsyncPaddock, AsyncPaymentOperations, AsyncSandbox, Paddock, PaymentOperations, Sandbox

T = TypeVar("T")


class Connection(TypedDict):
    api_key: str
    base_url: str


class Flavor(enum.Enum):
    SYNC = "sync"
    ASYNC = "async"

    @property
    def paddock(self) -> type[Paddock] | type[AsyncPaddock]:
        return Paddock if self is Flavor.SYNC else AsyncPaddock

    @property
    def sandbox(self) -> type[Sandbox] | type[AsyncSandbox]:
        return Sandbox if self is Flavor.SYNC else AsyncSandbox

    def kill_by_id(self, sandbox_id: str, connection: Connection) -> Any:
        """The class-level kill (``Sandbox.kill(id)``), which mypy cannot see through a union of classes."""
        if self is Flavor.SYNC:
            return Sandbox.kill(sandbox_id, **connection)
        return AsyncSandbox.kill(sandbox_id, **connection)

    @property
    def payment_operations(self) -> type[PaymentOperations] | type[AsyncPaymentOperations]:
        return PaymentOperations if self is Flavor.SYNC else AsyncPaymentOperations


async def result(value: Any) -> Any:
    """What a call answered: the sync client's value, or the async client's awaited. Typed
    loosely (mypy cannot follow one body through both clients); typing_check.py checks the
    clients' own types."""
    if isinstance(value, Awaitable):
        return await value
    return value


async def collect(items: Iterable[T] | AsyncIterable[T]) -> list[T]:
    """Every item of a sync or an async iterator."""
    if isinstance(items, AsyncIterable):
        return [item async for item in items]
    return list(items)


async def timed(items: Iterable[T] | AsyncIterable[T]) -> list[tuple[float, T]]:
    """Every item with the monotonic time it arrived at."""
    if isinstance(items, AsyncIterable):
        return [(time.monotonic(), item) async for item in items]
    return [(time.monotonic(), item) for item in items]


async def each(items: Iterable[T] | AsyncIterable[T]) -> AsyncIterator[T]:
    """The items of a sync or an async iterator, one at a time."""
    if isinstance(items, AsyncIterable):
        async for item in items:
            yield item
    else:
        for item in items:
            yield item
