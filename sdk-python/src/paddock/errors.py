"""Every error the SDK raises; ``code`` is the server's stable code (see docs/errors.md)."""

from __future__ import annotations

import builtins

from .models import TemplateBuild


class PaddockError(Exception):
    """The root of the tree: ``code`` (stable, snake_case), ``status`` (HTTP; 0 when no answer
    came back) and ``retryable`` (the same call may succeed later)."""

    def __init__(self, message: str, code: str, status: int, retryable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.retryable = retryable


class AuthenticationError(PaddockError):
    """401: missing, wrong or expired credentials."""


class PermissionError(PaddockError, builtins.PermissionError):
    """403: the credentials do not allow this. Also a builtin ``PermissionError``, so
    ``except PermissionError`` catches it whichever of the two names is in scope."""


class UsageLimitError(PaddockError):
    """402 (``usage_limit_reached``): the plan's minutes are used up; creates and resumes are refused."""


class NotFoundError(PaddockError):
    """404: no such sandbox, file, key, secret, … in this account."""


class ConflictError(PaddockError):
    """409: the resource is not in a state that allows this."""


class InvalidRequestError(PaddockError):
    """Any other 4xx: the request itself is wrong; the message says which option to change."""


class RateLimitError(PaddockError):
    """429: too many attempts; retryable."""


class ServerError(PaddockError):
    """5xx, or a sandbox that stopped answering mid-stream; 502 and 503 are retryable."""


class TimeoutError(PaddockError, builtins.TimeoutError):
    """The request took longer than its ``request_timeout``. Also a builtin ``TimeoutError``."""


class CommandExitError(PaddockError):
    """A command that ran and exited non-zero (``oom_killed``: the kernel killed it for memory)."""

    def __init__(self, exit_code: int, stdout: str, stderr: str, oom_killed: bool = False) -> None:
        tail = f": {stderr.strip()[-500:]}" if stderr else ""
        killed = "was killed for memory, " if oom_killed else ""
        super().__init__(f"command {killed}exited with code {exit_code}{tail}", "command_exit", 200)
        self.exit_code = exit_code
        self.stdout = stdout
        self.stderr = stderr
        self.oom_killed = oom_killed


class TemplateBuildError(PaddockError):
    """A template build that ended without an image: ``reason`` says which step failed and why
    ("step 3/4 (Dockerfile line 3) RUN …: exited with code 1"), ``failed_step`` its number
    (1-based; None when no step was at fault), ``build_id`` which build, ``build`` all of it.
    ``code`` is ``template_build_failed`` or ``template_build_cancelled``."""

    def __init__(self, build: TemplateBuild) -> None:
        reason = build.reason or f"the build ended {build.status}"
        code = "template_build_cancelled" if build.status == "cancelled" else "template_build_failed"
        super().__init__(f"template build {build.id} {build.status}: {reason}", code, 200)
        self.build = build
        self.build_id = build.id
        self.reason = reason
        self.failed_step = build.failed_step


def error_for(status: int, code: str, detail: str) -> PaddockError:
    """The one table from an HTTP answer to an error class (mirrors the TypeScript SDK's)."""
    if status == 401:
        return AuthenticationError(detail, code, status)
    if status == 403:
        return PermissionError(detail, code, status)
    if status == 402:
        return UsageLimitError(detail, code, status)
    if status == 404:
        return NotFoundError(detail, code, status)
    if status == 409:
        return ConflictError(detail, code, status)
    if status == 429:
        return RateLimitError(detail, code, status, True)
    if status >= 500:
        return ServerError(detail, code, status, status in (502, 503))
    return InvalidRequestError(detail, code, status)
