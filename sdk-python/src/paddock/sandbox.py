"""``Sandbox`` and ``AsyncSandbox``: a sandbox of the account the API key belongs to."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from types import TracebackType
from typing import Any, Literal
from urllib.parse import quote, urlencode

import httpx

from ._resource import Resource, TransportT, class_or_instance, endpoint, event_stream
from ._transport import (
    AsyncTransport,
    Call,
    Connection,
    EventsCall,
    Request,
    SyncTransport,
    items,
    model,
    nothing,
)
from ._wire import SseParser, camel, decode, parse, query
from .commands import STREAM_FAILURE_STATUS, Commands
from .diagnostics import Diagnostics
from .errors import NotFoundError, ServerError, error_for
from .files import AsyncFiles, Files
from .models import (
    CodeContext,
    CodeResult,
    NEVER,
    Endpoint,
    Lifecycle,
    NetworkPolicyOptions,
    SandboxInfo,
    SandboxLifecycle,
    SandboxList,
    SandboxMetrics,
    Template,
    VolumeMount,
)
from .network_policy import NetworkPolicy

DEFAULT_TEMPLATE = "python"

SecretNames = Sequence[str] | dict[str, str]
"""Stored secrets as environment variables, by name: ``["OPENAI_API_KEY"]`` uses each secret's own
name, ``{"API_KEY": "OPENAI_API_KEY"}`` picks the variable's name. Values never pass through here."""


class SandboxBase(Resource[TransportT]):
    """What ``Sandbox`` and ``AsyncSandbox`` share: state, sub-resources and per-sandbox calls."""

    def __init__(self, transport: TransportT, info: SandboxInfo) -> None:
        super().__init__(transport)
        self._info = info
        self.commands = Commands(transport, info.id)
        self.network_policy = NetworkPolicy(transport, info.id)
        self.diagnostics = Diagnostics(transport, info.id)

    @property
    def id(self) -> str:
        return self._info.id

    @property
    def state(self) -> str:
        """As of the last answer about this sandbox; ``refresh()`` asks again."""
        return self._info.state

    @property
    def template(self) -> str | None:
        """The template it was created from; None for one created from an image or a snapshot."""
        return self._info.template

    @property
    def metadata(self) -> dict[str, str]:
        return self._info.metadata

    @property
    def expires_at(self) -> str | None:
        return self._info.expires_at

    @property
    def lifecycle(self) -> SandboxLifecycle | None:
        """How it sleeps and wakes (None from a server that does not say)."""
        return self._info.lifecycle

    @property
    def paused_to(self) -> str | None:
        """``memory`` or ``disk`` while paused; None otherwise."""
        return self._info.paused_to

    @property
    def memory_preserved(self) -> bool | None:
        """Paused to disk: whether its processes and memory come back on resume."""
        return self._info.memory_preserved

    @property
    def idle_at(self) -> str | None:
        return self._info.idle_at

    @property
    def info(self) -> SandboxInfo:
        return self._info

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, state={self.state!r}, template={self.template!r})"

    def _call(self, method: str, suffix: str = "", json: object = None) -> Call[None]:
        """A call answering the sandbox, which becomes this object's state."""
        return Call(Request(method, f"/sandboxes/{self.id}{suffix}", json=json), self._adopt)

    def _adopt(self, response: httpx.Response) -> None:
        self._info = parse(SandboxInfo, response.content)

    @endpoint
    def refresh(self) -> Call[None]:
        return self._call("GET")

    @endpoint
    def pause(self, to: Literal["memory", "disk"] = "memory") -> Call[None]:
        """Pauses the sandbox; ``state`` is ``Pausing`` until it is ``Paused``. ``memory``
        freezes it in place; ``disk`` takes it off the host's memory (``memory_preserved`` then
        says whether its processes come back, or start again, on resume)."""
        return self._call("POST", "/pause", {"to": to} if to != "memory" else None)

    @endpoint
    def resume(self) -> Call[None]:
        return self._call("POST", "/resume")

    @endpoint
    def renew(self, timeout: int) -> Call[None]:
        """A new lifetime of ``timeout`` seconds, counted from now."""
        return self._call("POST", "/renew", {"timeout": timeout})

    @endpoint
    def set_metadata(self, patch: dict[str, str | None]) -> Call[None]:
        """Merges ``patch`` into the metadata; a None value removes that key."""
        return self._call("PATCH", "/metadata", patch)

    @endpoint
    def get_endpoint(self, port: int, *, expires_in: int | None = None) -> Call[Endpoint]:
        """A URL reaching ``port`` inside the sandbox (HTTP and WebSocket). The URL is the
        credential: share it only as far as the port should reach. It expires after
        ``expires_in`` seconds (default one hour)."""
        path = f"/sandboxes/{self.id}/endpoints/{port}"
        return Call(Request("GET", path, query(expires_in_seconds=expires_in)), model(Endpoint))

    @endpoint
    def metrics(self) -> Call[SandboxMetrics]:
        """The sandbox's CPU and memory now (execd's field names: ``cpu_used_pct``, ``mem_used_mib``, …)."""
        return Call(Request("GET", f"/sandboxes/{self.id}/metrics"), model(SandboxMetrics))

    @event_stream
    def watch_metrics(self) -> EventsCall[SandboxMetrics]:
        """A sample a second for as long as it is iterated. When the sandbox stops running
        (deleted, paused, killed) the iteration ends with the server's ``PaddockError``
        (``sandbox_not_found``, ``invalid_state``, …)."""
        return EventsCall(Request("GET", f"/sandboxes/{self.id}/metrics/watch"), _MetricsDecoder)

    @endpoint
    def create_code_context(self, language: str = "python") -> Call[CodeContext]:
        request = Request("POST", f"/sandboxes/{self.id}/code/contexts", json={"language": language})
        return Call(request, model(CodeContext))

    @endpoint
    def run_code(
        self,
        code: str,
        *,
        language: str | None = None,
        context: CodeContext | str | None = None,
        request_timeout: float | None = None,
    ) -> Call[CodeResult]:
        """Runs code in a kernel; pass ``context`` (from ``create_code_context``) to keep state
        between calls. An exception in the code is ``result.error``, not a raised error."""
        context_id = context.id if isinstance(context, CodeContext) else context
        body = {
            "code": code,
            **({"language": language} if language else {}),
            **({"contextId": context_id} if context_id else {}),
        }
        request = Request("POST", f"/sandboxes/{self.id}/code", json=body, timeout=request_timeout)
        return Call(request, model(CodeResult))


class _MetricsDecoder:
    """The watch's events as samples; its last event (the sandbox stopped) raises the error it
    names, and a stream that stops without one raises too."""

    def __init__(self) -> None:
        self._parser = SseParser()

    def feed(self, chunk: bytes) -> Iterable[SandboxMetrics]:
        return [sample for raw in self._parser.feed(chunk) if (sample := self._sample(raw)) is not None]

    def end(self) -> Iterable[SandboxMetrics]:
        for raw in self._parser.end():
            self._sample(raw)
        raise ServerError("the metrics stream ended before the sandbox stopped", "stream_incomplete", 0)

    @staticmethod
    def _sample(raw: dict[str, Any]) -> SandboxMetrics | None:
        if raw["type"] == "error":
            status = raw.get("status")
            raise error_for(
                status if isinstance(status, int) else STREAM_FAILURE_STATUS,
                str(raw.get("code", "stream_failed")),
                str(raw.get("detail", "the metrics stream failed")),
            )
        return decode(SandboxMetrics, raw) if raw["type"] == "metrics" else None


def _create_call(
    template: str,
    timeout: int | None,
    env: dict[str, str] | None,
    metadata: dict[str, str] | None,
    secrets: SecretNames | None,
    network_policy: NetworkPolicyOptions | None,
    volumes: Sequence[VolumeMount] | None = None,
    lifecycle: Lifecycle | None = None,
) -> Call[SandboxInfo]:
    body: dict[str, Any] = {"template": template}
    if timeout is not None:
        body["timeout"] = timeout
    if env:
        body["env"] = env
    if metadata:
        body["metadata"] = metadata
    if secrets:
        body["secrets"] = secrets if isinstance(secrets, dict) else {name: name for name in secrets}
    if network_policy:
        body["networkPolicy"] = _policy_body(network_policy)
    if volumes:
        body["volumes"] = [_mount_body(mount) for mount in volumes]
    if lifecycle:
        body["lifecycle"] = _lifecycle_body(lifecycle)
    return Call(Request("POST", "/sandboxes", json=body), model(SandboxInfo))


def _lifecycle_body(lifecycle: Lifecycle) -> dict[str, Any]:
    return {
        camel(name): None if value == NEVER else value
        for name, value in asdict(lifecycle).items()
        if value is not None
    }


def _mount_body(mount: VolumeMount) -> dict[str, Any]:
    return {
        "volume": mount.volume,
        "mountPath": mount.mount_path,
        **({"readOnly": True} if mount.read_only else {}),
        **({"subPath": mount.sub_path} if mount.sub_path is not None else {}),
    }


def _policy_body(policy: NetworkPolicyOptions) -> dict[str, Any]:
    return {
        **({"defaultAction": policy.default_action} if policy.default_action else {}),
        "egress": [asdict(rule) for rule in policy.egress],
    }


def _get_call(sandbox_id: str) -> Call[SandboxInfo]:
    return Call(Request("GET", f"/sandboxes/{quote(sandbox_id, safe='')}"), model(SandboxInfo))


def _list_call(
    state: str | Sequence[str] | None,
    metadata: dict[str, str] | None,
    template: str | None,
    page: int | None,
    page_size: int | None,
) -> Call[SandboxList]:
    states = [state] if isinstance(state, str) else list(state or [])
    # The server takes the metadata filter as one form-encoded parameter: `metadata=a%3D1%26b%3D2`.
    matching = urlencode(metadata) if metadata else None
    parameters = query(state=states, metadata=matching, template=template, page=page, page_size=page_size)
    return Call(Request("GET", "/sandboxes", parameters), model(SandboxList))


_templates_call = Call(Request("GET", "/sandboxes/templates"), items(Template))


def _kill_call(sandbox_id: str) -> Call[None]:
    return Call(Request("DELETE", f"/sandboxes/{quote(sandbox_id, safe='')}"), nothing)


class Sandbox(SandboxBase[SyncTransport]):
    """A sandbox, driven synchronously. ``with Sandbox.create() as sandbox:`` kills it on exit."""

    def __init__(self, transport: SyncTransport, info: SandboxInfo) -> None:
        super().__init__(transport, info)
        self.files = Files(transport, info.id)

    @classmethod
    def create(
        cls,
        template: str = DEFAULT_TEMPLATE,
        *,
        timeout: int | None = None,
        env: dict[str, str] | None = None,
        metadata: dict[str, str] | None = None,
        secrets: SecretNames | None = None,
        network_policy: NetworkPolicyOptions | None = None,
        volumes: Sequence[VolumeMount] | None = None,
        lifecycle: Lifecycle | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        request_timeout: float | None = None,
    ) -> Sandbox:
        """Creates a sandbox from ``template``, running when this returns. ``timeout``: lifetime
        in seconds (None: it does not expire). ``network_policy`` needs a server whose secure
        runtime can enforce it (runc or Kata, not gVisor). ``volumes``: the account's volumes to mount.
        ``lifecycle``: how it sleeps when idle and wakes on use (left out: the plan's defaults). The connection comes from
        ``api_key``/``base_url`` or PADDOCK_API_KEY/PADDOCK_BASE_URL."""
        transport = SyncTransport(Connection.resolve(api_key, base_url, request_timeout))
        try:
            call = _create_call(template, timeout, env, metadata, secrets, network_policy, volumes, lifecycle)
            info = transport.call(call)
        except BaseException:
            transport.close()
            raise
        return cls(transport, info)

    @classmethod
    def connect(
        cls,
        sandbox_id: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        request_timeout: float | None = None,
    ) -> Sandbox:
        """An object for an existing sandbox of the account."""
        transport = SyncTransport(Connection.resolve(api_key, base_url, request_timeout))
        try:
            return cls(transport, transport.call(_get_call(sandbox_id)))
        except BaseException:
            transport.close()
            raise

    @staticmethod
    def list(
        *,
        state: str | Sequence[str] | None = None,
        metadata: dict[str, str] | None = None,
        template: str | None = None,
        page: int | None = None,
        page_size: int | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        request_timeout: float | None = None,
    ) -> SandboxList:
        """One page of the account's sandboxes, filtered by state(s), metadata (all pairs match) and
        the template they were created from."""
        connection = Connection.resolve(api_key, base_url, request_timeout)
        return SyncTransport.once(connection, _list_call(state, metadata, template, page, page_size))

    @staticmethod
    def templates(
        *, api_key: str | None = None, base_url: str | None = None, request_timeout: float | None = None
    ) -> builtins.list[Template]:
        connection = Connection.resolve(api_key, base_url, request_timeout)
        return SyncTransport.once(connection, _templates_call)

    @staticmethod
    def _kill_by_id(
        sandbox_id: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        request_timeout: float | None = None,
    ) -> None:
        """Deletes the sandbox ``sandbox_id`` (``Sandbox.kill(id)``)."""
        connection = Connection.resolve(api_key, base_url, request_timeout)
        SyncTransport.once(connection, _kill_call(sandbox_id))

    def _kill(self) -> None:
        """Deletes this sandbox (``sandbox.kill()``)."""
        self._transport.call(_kill_call(self.id))

    kill = class_or_instance(_kill_by_id, _kill)
    """``Sandbox.kill(id)`` deletes a sandbox by id; ``sandbox.kill()`` deletes this one."""

    def close(self) -> None:
        """Closes this object's connections (the sandbox keeps running)."""
        self._transport.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        try:
            self.kill()
        except NotFoundError:
            pass  # killed inside the block already
        finally:
            self.close()


class AsyncSandbox(SandboxBase[AsyncTransport]):
    """A sandbox, driven with asyncio: the same methods as ``Sandbox``, awaited.
    ``async with await AsyncSandbox.create() as sandbox:`` kills it on exit."""

    def __init__(self, transport: AsyncTransport, info: SandboxInfo) -> None:
        super().__init__(transport, info)
        self.files = AsyncFiles(transport, info.id)

    @classmethod
    async def create(
        cls,
        template: str = DEFAULT_TEMPLATE,
        *,
        timeout: int | None = None,
        env: dict[str, str] | None = None,
        metadata: dict[str, str] | None = None,
        secrets: SecretNames | None = None,
        network_policy: NetworkPolicyOptions | None = None,
        volumes: Sequence[VolumeMount] | None = None,
        lifecycle: Lifecycle | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        request_timeout: float | None = None,
    ) -> AsyncSandbox:
        """As ``Sandbox.create``."""
        transport = AsyncTransport(Connection.resolve(api_key, base_url, request_timeout))
        try:
            call = _create_call(template, timeout, env, metadata, secrets, network_policy, volumes, lifecycle)
            info = await transport.call(call)
        except BaseException:
            await transport.close()
            raise
        return cls(transport, info)

    @classmethod
    async def connect(
        cls,
        sandbox_id: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        request_timeout: float | None = None,
    ) -> AsyncSandbox:
        transport = AsyncTransport(Connection.resolve(api_key, base_url, request_timeout))
        try:
            return cls(transport, await transport.call(_get_call(sandbox_id)))
        except BaseException:
            await transport.close()
            raise

    @staticmethod
    async def list(
        *,
        state: str | Sequence[str] | None = None,
        metadata: dict[str, str] | None = None,
        template: str | None = None,
        page: int | None = None,
        page_size: int | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        request_timeout: float | None = None,
    ) -> SandboxList:
        connection = Connection.resolve(api_key, base_url, request_timeout)
        return await AsyncTransport.once(connection, _list_call(state, metadata, template, page, page_size))

    @staticmethod
    async def templates(
        *, api_key: str | None = None, base_url: str | None = None, request_timeout: float | None = None
    ) -> builtins.list[Template]:
        connection = Connection.resolve(api_key, base_url, request_timeout)
        return await AsyncTransport.once(connection, _templates_call)

    @staticmethod
    async def _kill_by_id(
        sandbox_id: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        request_timeout: float | None = None,
    ) -> None:
        """Deletes the sandbox ``sandbox_id`` (``await AsyncSandbox.kill(id)``)."""
        connection = Connection.resolve(api_key, base_url, request_timeout)
        await AsyncTransport.once(connection, _kill_call(sandbox_id))

    async def _kill(self) -> None:
        """Deletes this sandbox (``await sandbox.kill()``)."""
        await self._transport.call(_kill_call(self.id))

    kill = class_or_instance(_kill_by_id, _kill)
    """``await AsyncSandbox.kill(id)`` deletes a sandbox by id; ``await sandbox.kill()`` this one."""

    async def close(self) -> None:
        await self._transport.close()

    async def __aenter__(self) -> AsyncSandbox:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        try:
            await self.kill()
        except NotFoundError:
            pass
        finally:
            await self.close()
