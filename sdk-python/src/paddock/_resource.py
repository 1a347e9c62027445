"""How one definition of an API method serves both clients.

A resource (``client.keys``, ``sandbox.commands``, …) is generic in its transport. Its methods are
written once, as functions that describe the request (``Call``, ``Collect``, ``EventsCall``), and
decorated with ``endpoint`` or ``event_stream``: read from a sync object the method sends the
request and returns the result; read from an async object it returns a coroutine (or an async
iterator) instead. mypy sees the exact signature and result type of both forms.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from ._transport import AsyncTransport, Call, Collect, EventsCall, SyncTransport

P = ParamSpec("P")
T = TypeVar("T")
E = TypeVar("E")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])
TransportT = TypeVar("TransportT", bound=SyncTransport | AsyncTransport)


class Resource(Generic[TransportT]):
    def __init__(self, transport: TransportT) -> None:
        self._transport: TransportT = transport


def _signature(build: Callable[..., Any]) -> inspect.Signature:
    """The method's signature as its callers see it: without ``self`` and the request it builds."""
    signature = inspect.signature(build)
    return signature.replace(
        parameters=list(signature.parameters.values())[1:], return_annotation=inspect.Signature.empty
    )


def _present(runner: F, build: Callable[..., Any], signature: inspect.Signature) -> F:
    """Gives a bound method its definition's name, docstring and signature, for help() and editors."""
    for name in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(runner, name, getattr(build, name))
    setattr(runner, "__signature__", signature)
    return runner


class endpoint(Generic[P, T]):
    """An API method: the decorated function builds the ``Call``; sync objects run it, async
    objects return a coroutine that does."""

    def __init__(self, build: Callable[Concatenate[Any, P], Call[T] | Collect[Any, T]]) -> None:
        self._build = build
        self._signature = _signature(build)

    @overload
    def __get__(self, instance: None, owner: type) -> endpoint[P, T]: ...

    @overload
    def __get__(self, instance: Resource[SyncTransport], owner: type) -> Callable[P, T]: ...

    @overload
    def __get__(
        self, instance: Resource[AsyncTransport], owner: type
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(self, instance: Resource[Any] | None, owner: type) -> Any:
        if instance is None:
            return self
        transport, build = instance._transport, self._build
        if isinstance(transport, AsyncTransport):

            async def run_async(*args: Any, **kwargs: Any) -> Any:
                return await transport.call(build(instance, *args, **kwargs))

            return _present(run_async, build, self._signature)

        def run(*args: Any, **kwargs: Any) -> Any:
            return transport.call(build(instance, *args, **kwargs))

        return _present(run, build, self._signature)


class event_stream(Generic[P, E]):
    """An API method answering a stream of items: an iterator on sync objects, an async iterator
    on async ones. Nothing is sent until the first item is asked for."""

    def __init__(self, build: Callable[Concatenate[Any, P], EventsCall[E]]) -> None:
        self._build = build
        self._signature = _signature(build)

    @overload
    def __get__(self, instance: None, owner: type) -> event_stream[P, E]: ...

    @overload
    def __get__(self, instance: Resource[SyncTransport], owner: type) -> Callable[P, Iterator[E]]: ...

    @overload
    def __get__(self, instance: Resource[AsyncTransport], owner: type) -> Callable[P, AsyncIterator[E]]: ...

    def __get__(self, instance: Resource[Any] | None, owner: type) -> Any:
        if instance is None:
            return self
        transport, build = instance._transport, self._build

        def stream(*args: Any, **kwargs: Any) -> Any:
            return transport.events(build(instance, *args, **kwargs))

        return _present(stream, build, self._signature)


class class_or_instance(Generic[F, P, R]):
    """A method with a class-level form and an instance form under one name, e.g.
    ``Sandbox.kill(id)`` and ``sandbox.kill()``."""

    def __init__(self, on_class: F, on_instance: Callable[Concatenate[Any, P], R]) -> None:
        self._on_class = on_class
        self._on_instance = on_instance
        self._signature = _signature(on_instance)
        self._name = on_instance.__name__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, instance: None, owner: type) -> F: ...

    @overload
    def __get__(self, instance: object, owner: type) -> Callable[P, R]: ...

    def __get__(self, instance: object | None, owner: type) -> Any:
        if instance is None:
            return self._on_class
        on_instance = self._on_instance

        def bound(*args: Any, **kwargs: Any) -> Any:
            return on_instance(instance, *args, **kwargs)

        bound = _present(bound, on_instance, self._signature)
        bound.__name__ = self._name
        bound.__qualname__ = f"{owner.__qualname__}.{self._name}"
        return bound
