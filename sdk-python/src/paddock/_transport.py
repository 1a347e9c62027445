"""One HTTP client per connection, sync or async: auth header, timeouts, errors mapped to classes.

Every API call is first described as data (a ``Call``, an ``EventsCall`` or a ``Collect``) by code
shared between the two clients; the two transports below are the only places that do I/O.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import socket
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Sequence,
)
from contextlib import aclosing, closing, contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Protocol, TypeVar, cast

import httpx

from ._wire import decode, parse
from .errors import PaddockError, TimeoutError, error_for

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
DEFAULT_REQUEST_TIMEOUT = 60.0
"""Seconds each phase of a request (connect, send, each wait for the answer's next bytes) may take."""

T = TypeVar("T")
E = TypeVar("E")
E_contra = TypeVar("E_contra", contravariant=True)
T_co = TypeVar("T_co", covariant=True)

Upload = bytes | Iterable[bytes] | AsyncIterable[bytes]


@dataclass(frozen=True)
class Connection:
    """Where and as whom to connect; ``resolve`` fills what is not passed from the environment."""

    base_url: str
    api_key: str | None
    request_timeout: float

    @classmethod
    def resolve(
        cls, api_key: str | None = None, base_url: str | None = None, request_timeout: float | None = None
    ) -> Connection:
        return cls(
            base_url=(base_url or os.environ.get("PADDOCK_BASE_URL") or DEFAULT_BASE_URL).rstrip("/"),
            api_key=api_key if api_key is not None else os.environ.get("PADDOCK_API_KEY"),
            request_timeout=DEFAULT_REQUEST_TIMEOUT if request_timeout is None else request_timeout,
        )

    def client_options(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "headers": {"authorization": f"Bearer {self.api_key}"} if self.api_key else {},
            "timeout": self.request_timeout,
        }


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: Sequence[tuple[str, str]] = ()
    json: object = None
    content: Upload | None = None
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float | None = None

    def options(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "url": self.path,
            "params": list(self.query),
            "headers": self.headers,
            **({"json": self.json} if self.json is not None else {}),
            **({"content": self.content} if self.content is not None else {}),
            **({"timeout": self.timeout} if self.timeout is not None else {}),
        }


@dataclass(frozen=True)
class Call(Generic[T]):
    """A request whose whole answer is read, then turned into a ``T``."""

    request: Request
    parse: Callable[[httpx.Response], T]


class Decoder(Protocol[T_co]):
    """Turns a streamed answer's bytes into items as they arrive; ``end`` sees the stream close."""

    def feed(self, chunk: bytes) -> Iterable[T_co]: ...

    def end(self) -> Iterable[T_co]: ...


@dataclass(frozen=True)
class EventsCall(Generic[E]):
    """A request whose answer is streamed and decoded into items of type ``E``."""

    request: Request
    decoder: Callable[[], Decoder[E]]


class Collector(Protocol[E_contra, T_co]):
    def add(self, item: E_contra) -> None: ...

    def result(self) -> T_co: ...


@dataclass(frozen=True)
class Collect(Generic[E, T]):
    """A streamed call folded into one result (e.g. a command run with output callbacks)."""

    events: EventsCall[E]
    collector: Callable[[], Collector[E, T]]


def model(cls: type[T]) -> Callable[[httpx.Response], T]:
    return lambda response: parse(cls, response.content)


def items(cls: type[T]) -> Callable[[httpx.Response], list[T]]:
    """For answers of the form ``{"items": [...]}`` where only the items matter."""
    return lambda response: [decode(cls, item) for item in response.json()["items"]]


def nothing(_: httpx.Response) -> None:
    return None


@contextmanager
def translated_errors(request: Request) -> Iterator[None]:
    """httpx's exceptions as the SDK's: a timeout is retryable, so is a connection that failed."""
    try:
        yield
    except httpx.TimeoutException as error:
        raise TimeoutError(
            f"{request.method} {request.path} took longer than the request timeout", "timeout", 0, True
        ) from error
    except httpx.TransportError as error:
        raise PaddockError(
            f"{request.method} {request.path} failed: {error}", "connection_failed", 0, True
        ) from error


def _check(response: httpx.Response, request: Request) -> None:
    """Raises the mapped error for a 4xx/5xx answer (whose body has been read)."""
    if response.is_success:
        return
    try:
        answer = response.json()
    except ValueError:
        answer = {}
    if not isinstance(answer, dict):
        answer = {}
    raise error_for(
        response.status_code,
        str(answer.get("code", "unknown_error")),
        str(answer.get("detail", f"{request.method} {request.path} answered {response.status_code}")),
    )


def _no_delay_transport() -> httpx.HTTPTransport:
    """A transport whose sockets send at once (TCP_NODELAY). httpx's sync client leaves Nagle's
    algorithm on, so a request's body waits for the ACK of its headers, which the server delays:
    about 25 ms more per call than the async client (asyncio sets TCP_NODELAY itself)."""
    no_delay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    if "socket_options" in inspect.signature(httpx.HTTPTransport).parameters:  # httpx 0.25 and later
        return cast(Any, httpx.HTTPTransport)(socket_options=no_delay)  # type: ignore[no-any-return]
    # Older httpx (Debian 12 has 0.23) has no public option: give its pool a backend that sets it.
    from httpcore.backends.sync import SyncBackend

    class NoDelayBackend(SyncBackend):
        def connect_tcp(self, *args: Any, **kwargs: Any) -> Any:
            stream = super().connect_tcp(*args, **kwargs)
            stream.get_extra_info("socket").setsockopt(*no_delay[0])
            return stream

    transport = httpx.HTTPTransport()
    transport._pool._network_backend = NoDelayBackend()
    return transport


class SyncTransport:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._client = httpx.Client(**connection.client_options(), transport=_no_delay_transport())

    def close(self) -> None:
        self._client.close()

    @classmethod
    def once(cls, connection: Connection, call: Call[T]) -> T:
        """One call on a client of its own, closed after."""
        transport = cls(connection)
        try:
            return transport.call(call)
        finally:
            transport.close()

    def call(self, call: Call[T] | Collect[Any, T]) -> T:
        if isinstance(call, Collect):
            collector = call.collector()
            with closing(self.events(call.events)) as items:  # a callback that raises closes the stream
                for item in items:
                    collector.add(item)
            return collector.result()
        with translated_errors(call.request):
            response = self._client.request(**call.request.options())
        _check(response, call.request)
        return call.parse(response)

    def events(self, call: EventsCall[E]) -> Generator[E, None, None]:
        decoder = call.decoder()
        with translated_errors(call.request), self._client.stream(**call.request.options()) as response:
            if not response.is_success:
                response.read()
                _check(response, call.request)
            for chunk in response.iter_bytes():
                yield from decoder.feed(chunk)
        yield from decoder.end()


class AsyncTransport:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._client = httpx.AsyncClient(**connection.client_options())

    async def close(self) -> None:
        await self._client.aclose()

    @classmethod
    async def once(cls, connection: Connection, call: Call[T]) -> T:
        transport = cls(connection)
        try:
            return await transport.call(call)
        finally:
            await transport.close()

    async def call(self, call: Call[T] | Collect[Any, T]) -> T:
        if isinstance(call, Collect):
            collector = call.collector()
            async with aclosing(self.events(call.events)) as items:
                async for item in items:
                    collector.add(item)
            return collector.result()
        request = self._asynchronous(call.request)
        with translated_errors(request):
            response = await self._client.request(**request.options())
        _check(response, request)
        return call.parse(response)

    async def events(self, call: EventsCall[E]) -> AsyncGenerator[E, None]:
        decoder = call.decoder()
        request = self._asynchronous(call.request)
        with translated_errors(request):
            async with self._client.stream(**request.options()) as response:
                if not response.is_success:
                    await response.aread()
                    _check(response, request)
                async for chunk in response.aiter_bytes():
                    for item in decoder.feed(chunk):
                        yield item
        for item in decoder.end():
            yield item

    @staticmethod
    def _asynchronous(request: Request) -> Request:
        """httpx's async client streams only async iterables: others are read on a worker thread
        (a file object's reads then never block the event loop)."""
        content = request.content
        if content is None or isinstance(content, (bytes, AsyncIterable)):
            return request
        return replace(request, content=_in_thread(content))


async def _in_thread(chunks: Iterable[bytes]) -> AsyncIterator[bytes]:
    iterator = iter(chunks)
    while (chunk := await asyncio.to_thread(_next_chunk, iterator)) is not None:
        yield chunk


def _next_chunk(chunks: Iterator[bytes]) -> bytes | None:
    return next(chunks, None)
