"""``sandbox.commands``: shell commands in the sandbox."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ._resource import Resource, TransportT, endpoint, event_stream
from ._transport import Call, Collect, EventsCall, Request, model
from ._wire import SseParser
from .errors import CommandExitError, ServerError, error_for
from .models import CommandEvent, CommandExit, CommandResult, Stderr, Stdout

OutputCallback = Callable[[str], object]

RESPONSE_MARGIN = 10.0
"""Seconds a command's answer may trail its own timeout (process teardown, the trip back)."""

STREAM_FAILURE_STATUS = 502
"""Status assumed for a stream's failure event that names no status: the one a buffered run
answers when the sandbox stops answering mid-command (``endpoint_unavailable``)."""


class Commands(Resource[TransportT]):
    def __init__(self, transport: TransportT, sandbox_id: str) -> None:
        super().__init__(transport)
        self._sandbox_id = sandbox_id

    @endpoint
    def run(
        self,
        cmd: str,
        *,
        cwd: str | None = None,
        envs: dict[str, str] | None = None,
        timeout: float | None = None,
        background: bool = False,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
        request_timeout: float | None = None,
    ) -> Call[CommandResult] | Collect[CommandEvent, CommandResult]:
        """Runs ``cmd`` in the sandbox's shell (bash) and waits for it. Raises ``CommandExitError``
        when it exits non-zero. ``timeout`` (seconds) kills it inside the sandbox;
        ``background=True`` starts it and returns at once (``exit_code`` -1) while it keeps running.
        With ``on_stdout`` or ``on_stderr`` the output streams: each callback gets every piece as
        it arrives."""
        body = _command_body(cmd, cwd, envs, timeout, background)
        request_seconds = self._request_timeout(timeout, request_timeout)
        if background or not (on_stdout or on_stderr):
            path = f"/sandboxes/{self._sandbox_id}/run"
            request = Request("POST", path, json=body, timeout=request_seconds)
            return Call(request, lambda response: _checked(model(CommandResult)(response), background))
        events = self._events(body, request_seconds)
        return Collect(events, lambda: _OutputCollector(on_stdout, on_stderr))

    @event_stream
    def stream(
        self,
        cmd: str,
        *,
        cwd: str | None = None,
        envs: dict[str, str] | None = None,
        timeout: float | None = None,
        request_timeout: float | None = None,
    ) -> EventsCall[CommandEvent]:
        """Runs ``cmd`` and yields its output as it comes (``Stdout``, ``Stderr``), then one
        ``CommandExit`` with the exit code (a non-zero code is an event here, not an error). A
        sandbox that dies mid-command ends the stream with a ``PaddockError``."""
        body = _command_body(cmd, cwd, envs, timeout, False)
        request_seconds = self._request_timeout(timeout, request_timeout)
        return self._events(body, request_seconds)

    def _request_timeout(self, timeout: float | None, request_timeout: float | None) -> float:
        """The answer comes when the command ends: a command allowed to run longer than the request
        timeout gets that much more time to answer."""
        if request_timeout is not None:
            return request_timeout
        default = self._transport.connection.request_timeout
        return max(default, timeout + RESPONSE_MARGIN) if timeout else default

    def _events(self, body: dict[str, Any], request_seconds: float) -> EventsCall[CommandEvent]:
        path = f"/sandboxes/{self._sandbox_id}/run/stream"
        return EventsCall(Request("POST", path, json=body, timeout=request_seconds), _CommandDecoder)


def _command_body(
    cmd: str, cwd: str | None, envs: dict[str, str] | None, timeout: float | None, background: bool
) -> dict[str, Any]:
    return {
        "command": cmd,
        **({"cwd": cwd} if cwd else {}),
        **({"env": envs} if envs else {}),
        **({"timeoutMs": max(1, round(timeout * 1000))} if timeout else {}),
        **({"background": True} if background else {}),
    }


def _checked(result: CommandResult, background: bool) -> CommandResult:
    if not background and result.exit_code != 0:
        raise CommandExitError(result.exit_code, result.stdout, result.stderr, result.oom_killed)
    return result


class _CommandDecoder:
    """The command's server-sent events as ``CommandEvent``s. The stream must end with the
    command's exit: a failure event (the sandbox died) raises the error it names, and a stream
    that stops without either raises too, so a caller never mistakes it for a finished command."""

    def __init__(self) -> None:
        self._parser = SseParser()
        self._exited = False

    def feed(self, chunk: bytes) -> Iterable[CommandEvent]:
        return [event for raw in self._parser.feed(chunk) if (event := self._event(raw)) is not None]

    def end(self) -> Iterable[CommandEvent]:
        events = [event for raw in self._parser.end() if (event := self._event(raw)) is not None]
        if not self._exited:
            raise ServerError(
                "the command's stream ended before the command did (the sandbox stopped, or the "
                "connection was cut)",
                "stream_incomplete",
                0,
            )
        return events

    def _event(self, raw: dict[str, Any]) -> CommandEvent | None:
        kind = raw["type"]
        if kind in ("stdout", "stderr"):
            text = str(raw.get("text", ""))
            return Stdout(text) if kind == "stdout" else Stderr(text)
        if kind == "execution_complete" or (kind == "error" and "exit_code" in raw):
            self._exited = True
            return CommandExit(int(raw.get("exit_code", 0)))
        if kind == "error":
            status = raw.get("status")
            raise error_for(
                status if isinstance(status, int) else STREAM_FAILURE_STATUS,
                str(raw.get("code", "stream_failed")),
                str(raw.get("detail", "the command's stream failed")),
            )
        return None  # `init` and events this SDK does not know


class _OutputCollector:
    def __init__(self, on_stdout: OutputCallback | None, on_stderr: OutputCallback | None) -> None:
        self._on_stdout = on_stdout
        self._on_stderr = on_stderr
        self._stdout: list[str] = []
        self._stderr: list[str] = []
        self._exit_code = -1

    def add(self, event: CommandEvent) -> None:
        if isinstance(event, Stdout):
            self._stdout.append(event.text)
            if self._on_stdout:
                self._on_stdout(event.text)
        elif isinstance(event, Stderr):
            self._stderr.append(event.text)
            if self._on_stderr:
                self._on_stderr(event.text)
        else:
            self._exit_code = event.exit_code

    def result(self) -> CommandResult:
        result = CommandResult("".join(self._stdout), "".join(self._stderr), self._exit_code)
        return _checked(result, False)
