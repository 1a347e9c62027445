"""A directory as a template build takes it: a tar.gz of its files, less what its ``.dockerignore``
names (comments, plain names, globs with ``*``, ``?``, ``[…]`` and ``**``, and ``!`` exceptions,
as Docker reads them)."""

from __future__ import annotations

import os
import re
import tarfile
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

IGNORE_FILE = ".dockerignore"


class DockerIgnore:
    """The rules of a ``.dockerignore``: a path is left out when the last rule matching it (or one
    of its parent directories) is not an exception."""

    def __init__(self, lines: Iterable[str]) -> None:
        self._rules: list[tuple[bool, re.Pattern[str]]] = []
        for line in lines:
            pattern = line.strip()
            if not pattern or pattern.startswith("#"):
                continue
            keep = pattern.startswith("!")
            pattern = os.path.normpath(pattern.removeprefix("!").strip()).replace(os.sep, "/").lstrip("/")
            if pattern and pattern != ".":
                self._rules.append((keep, _compile(pattern)))

    @classmethod
    def of(cls, directory: Path) -> DockerIgnore:
        path = directory / IGNORE_FILE
        return cls(path.read_text().splitlines() if path.is_file() else [])

    @property
    def has_exceptions(self) -> bool:
        """Whether a rule may bring back something inside a directory left out."""
        return any(keep for keep, _ in self._rules)

    def excludes(self, path: str) -> bool:
        """``path``: relative to the context, with ``/`` between names."""
        candidates = [path]
        while "/" in candidates[-1]:
            candidates.append(candidates[-1].rsplit("/", 1)[0])
        excluded = False
        for keep, pattern in self._rules:
            if any(pattern.fullmatch(candidate) for candidate in candidates):
                excluded = not keep
        return excluded


def _compile(pattern: str) -> re.Pattern[str]:
    """A Docker glob as a regular expression: ``*`` and ``?`` stay within a name, ``**`` crosses them."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**", index):
            index += 2
            if pattern.startswith("/", index):
                out.append("(?:.*/)?")
                index += 1
            else:
                out.append(".*")
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\" and index + 1 < len(pattern):
            index += 1
            out.append(re.escape(pattern[index]))
        elif char == "[" and (end := pattern.find("]", index + 2)) != -1:
            inside = pattern[index + 1 : end]
            if inside[0] in "!^":
                inside = "^" + inside[1:]
            out.append("[" + inside.replace("\\", "\\\\") + "]")
            index = end
        else:
            out.append(re.escape(char))
        index += 1
    return re.compile("".join(out))


def pack(directory: str | os.PathLike[str], *, always: Iterable[str] = ()) -> IO[bytes]:
    """The directory's files as tar.gz in a temporary file (read from its start; closing it removes
    it), never whole in memory. ``always``: paths sent even when ignored (a build's Dockerfile)."""
    root = Path(directory)
    if not root.is_dir():
        raise NotADirectoryError(f"{root} is not a directory")
    ignore = DockerIgnore.of(root)
    kept = {IGNORE_FILE, *(name.replace(os.sep, "/").lstrip("/") for name in always)}
    archive = tempfile.TemporaryFile()  # noqa: SIM115 (the caller closes it)
    try:
        with tarfile.open(fileobj=archive, mode="w:gz", compresslevel=6) as tar:
            for path, name in _entries(root, ignore, kept):
                _add(tar, path, name)
        archive.seek(0)
        return archive
    except BaseException:
        archive.close()
        raise


def _entries(root: Path, ignore: DockerIgnore, kept: set[str]) -> Iterator[tuple[Path, str]]:
    """(path, name in the archive) of everything not ignored, in a stable order. A directory left
    out is not walked, unless an exception could bring back something inside it."""
    for current, directories, files in os.walk(root):
        base = Path(current).relative_to(root).as_posix()
        prefix = "" if base == "." else f"{base}/"
        directories.sort()
        for directory in list(directories):
            name = prefix + directory
            if ignore.excludes(name) and not any(kept_name.startswith(f"{name}/") for kept_name in kept):
                if not ignore.has_exceptions:
                    directories.remove(directory)
                continue
            yield Path(current, directory), name
        for file in sorted(files):
            name = prefix + file
            if name in kept or not ignore.excludes(name):
                yield Path(current, file), name


def _add(tar: tarfile.TarFile, path: Path, name: str) -> None:
    """One entry, owned by root (the build sets owners); sockets, devices and pipes are left out."""
    info = tar.gettarinfo(str(path), arcname=name)
    if info.islnk():  # a second name of a file already packed: packed again, as the server takes files
        info.type, info.linkname, info.size = tarfile.REGTYPE, "", path.stat().st_size
    if not (info.isfile() or info.isdir() or info.issym()):
        return
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if info.isfile():
        with open(path, "rb") as content:
            tar.addfile(info, content)
    else:
        tar.addfile(info)

