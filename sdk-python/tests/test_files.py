"""Files: every form of read and write, listing and search, moves and removals, large files."""

from __future__ import annotations

import hashlib
import io
import os
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from paddock import AsyncSandbox, InvalidRequestError, NotFoundError, Sandbox

from .support import Flavor, collect, each, result

LARGE_FILE = 64 * 2**20
PEAK_LIMIT = 16 * 2**20
"""Python allocations allowed while a 64 MiB file goes up and comes back: far below its size."""


def _chunks(*parts: bytes) -> Iterator[bytes]:
    yield from parts


async def _async_chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_write_and_read_in_every_form(flavor: Flavor, sandbox: Sandbox | AsyncSandbox) -> None:
    folder = f"/tmp/forms-{flavor.value}"
    written = await result(sandbox.files.write(f"{folder}/text.txt", "héllo\nwörld\n"))
    assert written.path == f"{folder}/text.txt" and written.size == len("héllo\nwörld\n".encode())
    assert await result(sandbox.files.read(f"{folder}/text.txt")) == "héllo\nwörld\n"

    binary = bytes(range(256)) * 4  # not UTF-8
    await result(sandbox.files.write(f"{folder}/binary", binary, mode=600))
    assert await result(sandbox.files.read(f"{folder}/binary", format="bytes")) == binary
    assert b"".join(await collect(sandbox.files.read(f"{folder}/binary", format="stream"))) == binary
    listed = await result(sandbox.files.list(folder))
    assert {entry.path: entry.mode for entry in listed}[f"{folder}/binary"] == 600

    await result(sandbox.files.write(f"{folder}/from-file", io.BytesIO(b"from a file object")))
    assert await result(sandbox.files.read(f"{folder}/from-file")) == "from a file object"

    await result(sandbox.files.write(f"{folder}/from-chunks", _chunks(b"one ", b"two ", b"three")))
    assert await result(sandbox.files.read(f"{folder}/from-chunks")) == "one two three"

    # The sandbox sees what was written.
    listing = await result(sandbox.commands.run(f"cat {folder}/from-chunks {folder}/text.txt"))
    assert listing.stdout == "one two threehéllo\nwörld\n"

    if isinstance(sandbox, AsyncSandbox):  # the async client also takes async iterables
        await sandbox.files.write(f"{folder}/from-async-chunks", _async_chunks(b"a", b"sync"))
        assert await sandbox.files.read(f"{folder}/from-async-chunks") == "async"


async def test_list_search_move_remove_and_make_dir(flavor: Flavor, sandbox: Sandbox | AsyncSandbox) -> None:
    root = f"/tmp/tree-{flavor.value}"
    await result(sandbox.files.make_dir(f"{root}/a/b", mode=700))
    await result(sandbox.files.write(f"{root}/a/notes.txt", "notes"))
    await result(sandbox.files.write(f"{root}/a/b/deep.txt", "deep"))

    shallow = await result(sandbox.files.list(root))
    assert [(entry.path, entry.type) for entry in shallow] == [(f"{root}/a", "directory")]
    deep = {entry.path: entry for entry in await result(sandbox.files.list(root, depth=3))}
    assert set(deep) == {f"{root}/a", f"{root}/a/b", f"{root}/a/notes.txt", f"{root}/a/b/deep.txt"}
    assert deep[f"{root}/a/b"].mode == 700 and deep[f"{root}/a/notes.txt"].size == 5

    found = await result(sandbox.files.search(root, "*.txt"))
    assert sorted(entry.path for entry in found) == [f"{root}/a/b/deep.txt", f"{root}/a/notes.txt"]

    await result(sandbox.files.move(f"{root}/a/notes.txt", f"{root}/moved.txt"))
    assert await result(sandbox.files.read(f"{root}/moved.txt")) == "notes"
    with pytest.raises(NotFoundError):
        await result(sandbox.files.read(f"{root}/a/notes.txt"))

    await result(sandbox.files.remove(f"{root}/moved.txt"))
    with pytest.raises(InvalidRequestError) as directory:
        await result(sandbox.files.remove(f"{root}/a"))
    assert directory.value.status == 400 and "directory" in directory.value.message
    await result(sandbox.files.remove(f"{root}/a", recursive=True))
    assert await result(sandbox.files.list(root)) == []


async def test_a_missing_file_is_not_found(sandbox: Sandbox | AsyncSandbox) -> None:
    with pytest.raises(NotFoundError) as missing:
        await result(sandbox.files.read("/tmp/no-such-file"))
    assert missing.value.code == "file_not_found" and missing.value.status == 404
    with pytest.raises(NotFoundError):
        await collect(sandbox.files.read("/tmp/no-such-file", format="stream"))
    with pytest.raises(NotFoundError):
        await result(sandbox.files.list("/tmp/no-such-directory"))


async def test_a_large_file_streams_both_ways_in_bounded_memory(
    flavor: Flavor, sandbox: Sandbox | AsyncSandbox, tmp_path: Path
) -> None:
    source = tmp_path / "large.bin"
    sent = hashlib.sha256()
    with source.open("wb") as file:
        for _ in range(LARGE_FILE // 2**20):
            block = os.urandom(2**20)
            sent.update(block)
            file.write(block)

    target = f"/tmp/large-{flavor.value}.bin"
    tracemalloc.start()
    try:
        with source.open("rb") as file:
            written = await result(sandbox.files.write(target, file))
        received = hashlib.sha256()
        size = 0
        async for chunk in each(sandbox.files.read(target, format="stream")):
            received.update(chunk)
            size += len(chunk)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert written.size == LARGE_FILE and size == LARGE_FILE
    assert received.hexdigest() == sent.hexdigest()
    assert peak < PEAK_LIMIT, f"{peak} bytes allocated at the peak for a {LARGE_FILE}-byte file"
    await result(sandbox.files.remove(target))
