"""``sandbox.files``: the sandbox's filesystem. Reads and writes stream: a file of any size
passes through this client a chunk at a time."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Coroutine, Iterable, Iterator
from typing import IO, Any, Literal, cast, overload

import builtins

from ._resource import Resource, TransportT, endpoint
from ._transport import (
    AsyncTransport,
    Call,
    EventsCall,
    Request,
    SyncTransport,
    Upload,
    items,
    model,
    nothing,
)
from ._wire import query
from .models import FileInfo, WriteResult

CHUNK_SIZE = 1 << 20
"""Bytes read from a file object per upload chunk."""

ReadFormat = Literal["text", "bytes", "stream"]
WriteData = str | bytes | IO[bytes] | Iterable[bytes]


class FilesBase(Resource[TransportT]):
    def __init__(self, transport: TransportT, sandbox_id: str) -> None:
        super().__init__(transport)
        self._sandbox_id = sandbox_id

    def _path(self, suffix: str) -> str:
        return f"/sandboxes/{self._sandbox_id}{suffix}"

    @endpoint
    def list(self, path: str, *, depth: int = 1) -> Call[builtins.list[FileInfo]]:
        """Entries under ``path``, ``depth`` levels down."""
        return Call(Request("GET", self._path("/files/list"), query(path=path, depth=depth)), items(FileInfo))

    @endpoint
    def search(self, path: str, pattern: str) -> Call[builtins.list[FileInfo]]:
        """Files under ``path`` whose name matches the glob ``pattern``."""
        request = Request("POST", self._path("/files/search"), json={"path": path, "pattern": pattern})
        return Call(request, items(FileInfo))

    @endpoint
    def move(self, src: str, dst: str) -> Call[None]:
        return Call(Request("POST", self._path("/files/move"), json={"from": src, "to": dst}), nothing)

    @endpoint
    def remove(self, path: str, *, recursive: bool = False) -> Call[None]:
        """Removes a file, or a directory with everything in it when ``recursive``."""
        return Call(Request("DELETE", self._path("/files"), query(path=path, recursive=recursive)), nothing)

    @endpoint
    def make_dir(self, path: str, *, mode: int | None = None) -> Call[None]:
        """Creates the directory and its missing parents; ``mode`` in ``ls``'s octal digits (755)."""
        body: dict[str, object] = {"path": path, **({"mode": mode} if mode is not None else {})}
        return Call(Request("POST", self._path("/directories"), json=body), nothing)

    def _download(self, path: str) -> Request:
        return Request("GET", self._path("/files/download"), query(path=path))

    def _read_call(self, path: str, format: ReadFormat) -> Call[str | bytes]:
        if format == "text":
            return Call(self._download(path), lambda response: response.content.decode())
        if format == "bytes":
            return Call(self._download(path), lambda response: response.content)
        raise ValueError(f'format must be "text", "bytes" or "stream", not {format!r}')

    def _read_stream(self, path: str) -> EventsCall[bytes]:
        return EventsCall(self._download(path), _Chunks)

    def _write_call(self, path: str, content: Upload, mode: int | None) -> Call[WriteResult]:
        request = Request(
            "POST",
            self._path("/files/upload"),
            query(path=path, mode=mode),
            content=content,
            headers={"content-type": "application/octet-stream"},
        )
        return Call(request, model(WriteResult))


class Files(FilesBase[SyncTransport]):
    @overload
    def read(self, path: str, format: Literal["text"] = "text") -> str: ...

    @overload
    def read(self, path: str, format: Literal["bytes"]) -> bytes: ...

    @overload
    def read(self, path: str, format: Literal["stream"]) -> Iterator[bytes]: ...

    def read(self, path: str, format: ReadFormat = "text") -> str | bytes | Iterator[bytes]:
        """The file as text (UTF-8), as bytes, or as an iterator of byte chunks that never holds
        the file whole (``format="stream"``; errors such as ``NotFoundError`` then come with the
        first chunk)."""
        if format == "stream":
            return self._transport.events(self._read_stream(path))
        return self._transport.call(self._read_call(path, format))

    def write(self, path: str, data: WriteData, *, mode: int | None = None) -> WriteResult:
        """Creates or replaces the file with ``data``: text (UTF-8), bytes, a binary file object
        (read a chunk at a time) or an iterable of byte chunks, streamed to the sandbox."""
        return self._transport.call(self._write_call(path, _upload(data), mode))


class AsyncFiles(FilesBase[AsyncTransport]):
    @overload
    def read(self, path: str, format: Literal["text"] = "text") -> Coroutine[Any, Any, str]: ...

    @overload
    def read(self, path: str, format: Literal["bytes"]) -> Coroutine[Any, Any, bytes]: ...

    @overload
    def read(self, path: str, format: Literal["stream"]) -> AsyncIterator[bytes]: ...

    def read(
        self, path: str, format: ReadFormat = "text"
    ) -> Coroutine[Any, Any, str | bytes] | AsyncIterator[bytes]:
        """As ``Files.read``: ``await files.read(path)`` for text or bytes, and
        ``async for chunk in files.read(path, format="stream")`` for the chunks."""
        if format == "stream":
            return self._transport.events(self._read_stream(path))
        return self._transport.call(self._read_call(path, format))

    async def write(
        self, path: str, data: WriteData | AsyncIterable[bytes], *, mode: int | None = None
    ) -> WriteResult:
        """As ``Files.write``, also taking an async iterable of byte chunks. File objects and
        iterables are read on a worker thread, never blocking the event loop."""
        content = data if isinstance(data, AsyncIterable) else _upload(data)
        return await self._transport.call(self._write_call(path, content, mode))


def _upload(data: WriteData) -> bytes | Iterable[bytes]:
    if isinstance(data, str):
        return data.encode()
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    if hasattr(data, "read"):  # before Iterable: a file object iterates over lines
        return _file_chunks(cast(IO[bytes], data))
    return data


def _file_chunks(file: IO[bytes]) -> Iterator[bytes]:
    while chunk := file.read(CHUNK_SIZE):
        yield chunk


class _Chunks:
    """A download's bytes, passed on as they arrive."""

    def feed(self, chunk: bytes) -> Iterable[bytes]:
        return (chunk,)

    def end(self) -> Iterable[bytes]:
        return ()
