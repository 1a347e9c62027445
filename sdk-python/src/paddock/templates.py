"""``client.templates``: templates the account builds itself, from a Dockerfile and its directory or
from a template and steps, then starts sandboxes from by name (``Sandbox.create("<name>")``)."""

from __future__ import annotations

import asyncio
import builtins
import os
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import aclosing, closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from ._context import pack
from ._resource import Resource, TransportT, endpoint
from ._transport import AsyncTransport, Call, EventsCall, Request, SyncTransport, items, model, nothing
from ._wire import SseParser, decode, query
from .commands import STREAM_FAILURE_STATUS
from .errors import PaddockError, ServerError, TemplateBuildError, TimeoutError, error_for
from .files import _file_chunks
from .models import (
    AccountTemplate,
    AccountTemplateDetail,
    BuildLogEntry,
    BuildLogPage,
    BuildStarted,
    BuildStep,
    CopyStep,
    EnvStep,
    RunStep,
    TemplateBuild,
    UploadedFiles,
    UserStep,
    WorkdirStep,
)

LogCallback = Callable[[BuildLogEntry], object]

RECONNECT_DELAY = 0.5
"""Seconds before following a build's log again after its stream was cut."""

_ENDED = ("ready", "error", "cancelled")


class TemplatesBase(Resource[TransportT]):
    """What ``Templates`` and ``AsyncTemplates`` share. Works with a session, an unscoped key or a
    key scoped to ``sandboxes``; another account's templates answer ``NotFoundError``."""

    @endpoint
    def list(self) -> Call[builtins.list[AccountTemplate]]:
        """The account's own templates (``Sandbox.templates()`` lists all it can start from)."""
        return Call(Request("GET", "/templates"), items(AccountTemplate))

    @endpoint
    def get(self, name: str) -> Call[AccountTemplateDetail]:
        """The template with its builds, newest first."""
        return Call(Request("GET", _path(name)), model(AccountTemplateDetail))

    @endpoint
    def delete(self, name: str) -> Call[None]:
        """Deletes the template, its builds, logs and images; ``ConflictError``
        (``template_in_use``) while sandboxes run from it."""
        return Call(Request("DELETE", _path(name)), nothing)

    @endpoint
    def get_build(self, name: str, build_id: str) -> Call[TemplateBuild]:
        return Call(Request("GET", _path(name, build_id)), model(TemplateBuild))

    @endpoint
    def cancel(self, name: str, build_id: str) -> Call[TemplateBuild]:
        """Asks the build to stop; it ends ``cancelled`` within about a second. ``ConflictError``
        (``invalid_state_transition``) for a build that has ended."""
        return Call(Request("POST", _path(name, build_id, "/cancel")), model(TemplateBuild))

    @endpoint
    def logs(
        self, name: str, build_id: str, *, from_: int = 0, limit: int | None = None
    ) -> Call[BuildLogPage]:
        """The build's log from entry ``from_`` on (at most ``limit`` entries; the server's
        default is 1000); ``next`` is where the next page starts."""
        request = Request("GET", _path(name, build_id, "/logs"), query(from_=from_, limit=limit))
        return Call(request, model(BuildLogPage))

    def _context_call(
        self,
        name: str,
        archive: IO[bytes],
        dockerfile: str | None,
        description: str | None,
        cpu: str | float | None,
        memory: str | None,
        force: bool,
    ) -> Call[BuildStarted]:
        parameters = query(
            dockerfile=dockerfile,
            description=description,
            cpu=None if cpu is None else str(cpu),
            memory=memory,
            force=force or None,
        )
        request = Request(
            "POST",
            _path(name, suffix="/builds"),
            parameters,
            content=_file_chunks(archive),
            headers={"content-type": "application/gzip"},
        )
        return Call(request, model(BuildStarted))

    def _files_call(self, archive: IO[bytes]) -> Call[UploadedFiles]:
        headers = {"content-type": "application/gzip"}
        request = Request("POST", "/templates/files", content=_file_chunks(archive), headers=headers)
        return Call(request, model(UploadedFiles))

    def _steps_call(self, name: str, body: dict[str, Any]) -> Call[BuildStarted]:
        return Call(Request("POST", _path(name, suffix="/builds"), json=body), model(BuildStarted))

    def _following(
        self, name: str, build: TemplateBuild, on_log: LogCallback | None, timeout: float | None
    ) -> _Following:
        return _Following(name, build.id, on_log, timeout, self._transport.connection.request_timeout)


class Templates(TemplatesBase[SyncTransport]):
    """``Paddock.templates``: the account's own templates."""

    def build(
        self,
        name: str,
        path: str | os.PathLike[str],
        *,
        dockerfile: str | None = None,
        description: str | None = None,
        cpu: str | float | None = None,
        memory: str | None = None,
        force: bool = False,
        on_log: LogCallback | None = None,
        timeout: float | None = None,
    ) -> TemplateBuild:
        """Builds template ``name`` from the directory ``path`` and its Dockerfile (``dockerfile``:
        another file in it), leaving out what its ``.dockerignore`` names. Waits for the build,
        passing each log entry to ``on_log`` as it comes, and returns it once ready; raises
        ``TemplateBuildError`` when it fails or is cancelled. Past ``timeout`` seconds (or when
        interrupted) the build is cancelled and ``TimeoutError`` (or the interruption) raised.
        ``cpu`` (``"2"``) and ``memory`` (``"2Gi"``) size its sandboxes; ``force`` rebuilds
        every step even when the cache holds it."""
        inside = _dockerfile_inside(path, dockerfile)
        with pack(path, always=[inside or "Dockerfile"]) as archive:
            call = self._context_call(name, archive, inside, description, cpu, memory, force)
            started = self._transport.call(call)
        return self._follow(name, started.build, on_log, timeout)

    def build_from_steps(
        self,
        name: str,
        from_: str,
        steps: Sequence[BuildStep | dict[str, Any]],
        *,
        start_command: str | None = None,
        ready_command: str | None = None,
        description: str | None = None,
        cpu: str | float | None = None,
        memory: str | None = None,
        force: bool = False,
        on_log: LogCallback | None = None,
        timeout: float | None = None,
    ) -> TemplateBuild:
        """Builds template ``name`` from the template ``from_`` (built in, the account's own or
        published) and ``steps`` (``RunStep``, ``CopyStep`` with files from ``upload_files``,
        ``EnvStep``, ``WorkdirStep``, ``UserStep``). ``start_command`` runs at every sandbox's
        start; a create returns once ``ready_command`` exits 0. Waits as ``build`` does."""
        body = _steps_body(from_, steps, start_command, ready_command, description, cpu, memory, force)
        started = self._transport.call(self._steps_call(name, body))
        return self._follow(name, started.build, on_log, timeout)

    def upload_files(self, path: str | os.PathLike[str]) -> str:
        """Packs the directory ``path`` (less what its ``.dockerignore`` names) for ``CopyStep``s,
        whose ``src`` are paths inside it; answers the ``hash`` they name it by."""
        with pack(path) as archive:
            return self._transport.call(self._files_call(archive)).hash

    def wait(
        self, name: str, build_id: str, *, on_log: LogCallback | None = None, timeout: float | None = None
    ) -> TemplateBuild:
        """Follows a build already started, as ``build`` does: its log from the start to
        ``on_log``, then the ready build or ``TemplateBuildError``."""
        return self._follow(name, self.get_build(name, build_id), on_log, timeout)

    def _follow(
        self, name: str, build: TemplateBuild, on_log: LogCallback | None, timeout: float | None
    ) -> TemplateBuild:
        following = self._following(name, build, on_log, timeout)
        try:
            while not following.ended:
                try:
                    with closing(self._transport.events(following.stream())) as events:
                        for item in events:
                            following.add(item)
                except PaddockError as error:
                    following.resume_after(error)
                if following.cut:
                    time.sleep(RECONNECT_DELAY)
        except BaseException:
            _ignore_failure(lambda: self.cancel(name, build.id))
            raise
        return following.result()


class AsyncTemplates(TemplatesBase[AsyncTransport]):
    """``AsyncPaddock.templates``: as ``Templates``, awaited. Directories are packed on a worker thread."""

    async def build(
        self,
        name: str,
        path: str | os.PathLike[str],
        *,
        dockerfile: str | None = None,
        description: str | None = None,
        cpu: str | float | None = None,
        memory: str | None = None,
        force: bool = False,
        on_log: LogCallback | None = None,
        timeout: float | None = None,
    ) -> TemplateBuild:
        """As ``Templates.build``; cancelling the task cancels the build too."""
        inside = _dockerfile_inside(path, dockerfile)
        with await asyncio.to_thread(pack, path, always=[inside or "Dockerfile"]) as archive:
            call = self._context_call(name, archive, inside, description, cpu, memory, force)
            started = await self._transport.call(call)
        return await self._follow(name, started.build, on_log, timeout)

    async def build_from_steps(
        self,
        name: str,
        from_: str,
        steps: Sequence[BuildStep | dict[str, Any]],
        *,
        start_command: str | None = None,
        ready_command: str | None = None,
        description: str | None = None,
        cpu: str | float | None = None,
        memory: str | None = None,
        force: bool = False,
        on_log: LogCallback | None = None,
        timeout: float | None = None,
    ) -> TemplateBuild:
        body = _steps_body(from_, steps, start_command, ready_command, description, cpu, memory, force)
        started = await self._transport.call(self._steps_call(name, body))
        return await self._follow(name, started.build, on_log, timeout)

    async def upload_files(self, path: str | os.PathLike[str]) -> str:
        with await asyncio.to_thread(pack, path) as archive:
            return (await self._transport.call(self._files_call(archive))).hash

    async def wait(
        self, name: str, build_id: str, *, on_log: LogCallback | None = None, timeout: float | None = None
    ) -> TemplateBuild:
        return await self._follow(name, await self.get_build(name, build_id), on_log, timeout)

    async def _follow(
        self, name: str, build: TemplateBuild, on_log: LogCallback | None, timeout: float | None
    ) -> TemplateBuild:
        following = self._following(name, build, on_log, timeout)
        try:
            while not following.ended:
                try:
                    async with aclosing(self._transport.events(following.stream())) as events:
                        async for item in events:
                            following.add(item)
                except PaddockError as error:
                    following.resume_after(error)
                if following.cut:
                    await asyncio.sleep(RECONNECT_DELAY)
        except BaseException:
            try:
                await self.cancel(name, build.id)
            except PaddockError:
                pass  # the build may have ended, or the server be out of reach: the first error matters
            raise
        return following.result()


@dataclass
class _Following:
    """Where following a build's log stands: the next entry wanted, the build once it ended, and
    the time left. A stream cut or quiet for longer than the request timeout is followed again
    from the next entry, so no entry is passed on twice and none is missed."""

    name: str
    build_id: str
    on_log: LogCallback | None
    timeout: float | None
    request_timeout: float
    next: int = 0
    final: TemplateBuild | None = None
    cut: bool = False
    deadline: float | None = field(init=False)

    def __post_init__(self) -> None:
        self.deadline = None if self.timeout is None else time.monotonic() + self.timeout

    @property
    def ended(self) -> bool:
        return self.final is not None

    def stream(self) -> EventsCall[BuildLogEntry | TemplateBuild]:
        self.check_deadline()
        self.cut = False
        seconds = self.request_timeout
        if self.deadline is not None:
            seconds = max(0.1, min(seconds, self.deadline - time.monotonic()))
        request = Request(
            "GET",
            _path(self.name, self.build_id, "/logs"),
            query(from_=self.next),
            headers={"accept": "text/event-stream"},
            timeout=seconds,
        )
        return EventsCall(request, _BuildEvents)

    def add(self, item: BuildLogEntry | TemplateBuild) -> None:
        if isinstance(item, TemplateBuild):
            self.final = item
            return
        if item.seq < self.next:
            return
        self.next = item.seq + 1
        if self.on_log:
            self.on_log(item)
        self.check_deadline()

    def resume_after(self, error: PaddockError) -> None:
        """A read that waited longer than the request timeout (a step with no output) or a stream
        that ended early is followed again; any other error ends the following."""
        if error.code not in ("timeout", "stream_incomplete"):
            raise error
        self.check_deadline()
        self.cut = error.code == "stream_incomplete"

    def check_deadline(self) -> None:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise TimeoutError(
                f"template build {self.build_id} did not end within {self.timeout:g} s; it is cancelled",
                "template_build_timeout",
                0,
            )

    def result(self) -> TemplateBuild:
        assert self.final is not None
        if self.final.status != "ready":
            raise TemplateBuildError(self.final)
        return self.final


class _BuildEvents:
    """A build log's server-sent events: each entry, then the build once it ended. A stream that
    stops before the end raises ``stream_incomplete``; an error event raises the error it names."""

    def __init__(self) -> None:
        self._parser = SseParser()
        self._ended = False

    def feed(self, chunk: bytes) -> Iterable[BuildLogEntry | TemplateBuild]:
        return [item for raw in self._parser.feed(chunk) if (item := self._item(raw)) is not None]

    def end(self) -> Iterable[BuildLogEntry | TemplateBuild]:
        items = [item for raw in self._parser.end() if (item := self._item(raw)) is not None]
        if not self._ended:
            raise ServerError("the build's log stream ended before the build did", "stream_incomplete", 0)
        return items

    def _item(self, raw: dict[str, Any]) -> BuildLogEntry | TemplateBuild | None:
        kind = raw["type"]
        if kind == "log":
            entry: BuildLogEntry = decode(BuildLogEntry, raw)
            return entry
        if kind == "status" and raw.get("status") in _ENDED:
            self._ended = True
            build: TemplateBuild = decode(TemplateBuild, raw)
            return build
        if kind == "error":
            status = raw.get("status")
            raise error_for(
                status if isinstance(status, int) else STREAM_FAILURE_STATUS,
                str(raw.get("code", "stream_failed")),
                str(raw.get("detail", "the build's log stream failed")),
            )
        return None


def _path(name: str, build_id: str | None = None, suffix: str = "") -> str:
    path = f"/templates/{quote(name, safe='')}"
    if build_id is not None:
        path += f"/builds/{quote(build_id, safe='')}"
    return path + suffix


def _dockerfile_inside(directory: str | os.PathLike[str], dockerfile: str | None) -> str | None:
    """The Dockerfile's path relative to the directory (it may be given absolute); None: the default."""
    if dockerfile is None:
        return None
    path = Path(dockerfile)
    if path.is_absolute():
        path = path.relative_to(Path(directory).absolute())
    return path.as_posix()


def _steps_body(
    from_: str,
    steps: Sequence[BuildStep | dict[str, Any]],
    start_command: str | None,
    ready_command: str | None,
    description: str | None,
    cpu: str | float | None,
    memory: str | None,
    force: bool,
) -> dict[str, Any]:
    limits = {
        **({"cpu": str(cpu)} if cpu is not None else {}),
        **({"memory": memory} if memory is not None else {}),
    }
    return {
        "from": from_,
        "steps": [step if isinstance(step, dict) else _step_body(step) for step in steps],
        **({"startCommand": start_command} if start_command is not None else {}),
        **({"readyCommand": ready_command} if ready_command is not None else {}),
        **({"description": description} if description is not None else {}),
        **({"resourceLimits": limits} if limits else {}),
        **({"force": True} if force else {}),
    }


def _step_body(step: BuildStep) -> dict[str, Any]:
    body: dict[str, Any]
    if isinstance(step, RunStep):
        body = {"type": "RUN", "command": step.command, "user": step.user}
    elif isinstance(step, CopyStep):
        body = {"type": "COPY", "files": step.files, "src": step.src, "dest": step.dest}
        body |= {"user": step.user, "mode": step.mode}
    elif isinstance(step, EnvStep):
        body = {"type": "ENV", "values": step.values}
    elif isinstance(step, WorkdirStep):
        body = {"type": "WORKDIR", "path": step.path}
    elif isinstance(step, UserStep):
        body = {"type": "USER", "user": step.user}
    else:
        raise TypeError(f"not a build step: {step!r}")
    body["force"] = step.force or None
    return {key: value for key, value in body.items() if value is not None}


def _ignore_failure(action: Callable[[], object]) -> None:
    try:
        action()
    except PaddockError:
        pass  # the build may have ended, or the server be out of reach: the first error matters
