"""Sandboxes: create, connect, list, templates, lifecycle, endpoints, code, kill and context managers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from contextlib import aclosing, closing
from datetime import datetime, timezone

import httpx
import pytest

from paddock import (
    AsyncSandbox,
    CodeContext,
    ConflictError,
    DiagnosticText,
    NEVER,
    InvalidRequestError,
    Lifecycle,
    NotFoundError,
    Sandbox,
    SandboxLifecycle,
    SandboxMetrics,
)

from .conftest import RUN_ID, User
from .support import Flavor, each, result


async def test_create_options_reach_the_sandbox(flavor: Flavor, sandbox: Sandbox | AsyncSandbox) -> None:
    assert sandbox.id.startswith("sbx-") and sandbox.template == "python"
    assert sandbox.state == "Running"
    assert sandbox.metadata == {"suite": RUN_ID, "flavor": flavor.value}
    assert sandbox.expires_at is not None
    remaining = datetime.fromisoformat(sandbox.expires_at.replace("Z", "+00:00")) - datetime.now(timezone.utc)
    assert 0 < remaining.total_seconds() <= 900
    output = await result(sandbox.commands.run('echo "$GREETING $SHARED_TOKEN"'))
    assert output.stdout == f"hello token-{flavor.value}\n"


async def test_connect_list_and_templates(
    flavor: Flavor, sandbox: Sandbox | AsyncSandbox, user: User
) -> None:
    connection = user.connection
    connected = await result(flavor.sandbox.connect(sandbox.id, **connection))
    assert (connected.id, connected.metadata, connected.state) == (sandbox.id, sandbox.metadata, "Running")
    await result(connected.close())

    mine = {"suite": RUN_ID, "flavor": flavor.value}
    listed = await result(flavor.sandbox.list(metadata=mine, **connection))
    assert [item.id for item in listed.items] == [sandbox.id]
    running = await result(flavor.sandbox.list(state="Running", metadata=mine, **connection))
    assert [item.id for item in running.items] == [sandbox.id]
    paused = await result(flavor.sandbox.list(state=["Paused", "Pausing"], metadata=mine, **connection))
    assert paused.items == []
    first_page = await result(flavor.sandbox.list(page=1, page_size=1, **connection))
    assert first_page.pagination.page_size == 1 and len(first_page.items) == 1

    templates = await result(flavor.sandbox.templates(**connection))
    python = next(template for template in templates if template.id == "python")
    assert python.name == "Python" and python.resource_limits["memory"] == "1Gi"
    browser = next(template for template in templates if template.id == "browser")
    assert 9222 in [port.port for port in browser.ports]


async def _first(
    watch: Iterator[SandboxMetrics] | AsyncIterator[SandboxMetrics], count: int
) -> list[SandboxMetrics]:
    """The first ``count`` samples of a watch, which is then closed."""
    samples: list[SandboxMetrics] = []
    if isinstance(watch, AsyncGenerator):
        async with aclosing(watch):
            async for sample in watch:
                samples.append(sample)
                if len(samples) == count:
                    break
    else:
        assert isinstance(watch, Generator)
        with closing(watch):
            for sample in watch:
                samples.append(sample)
                if len(samples) == count:
                    break
    return samples


async def test_metrics_diagnostics_and_the_template_filter(
    flavor: Flavor, sandbox: Sandbox | AsyncSandbox, user: User
) -> None:
    sample = await result(sandbox.metrics())
    assert isinstance(sample, SandboxMetrics)
    assert sample.cpu_count > 0 and 0 <= sample.cpu_used_pct <= 100
    assert 0 < sample.mem_used_mib <= sample.mem_total_mib
    watched = await _first(sandbox.watch_metrics(), 2)
    assert watched[1].timestamp > watched[0].timestamp

    logs = await result(sandbox.diagnostics.logs())
    assert isinstance(logs, DiagnosticText) and "Running" in logs.text and not logs.truncated
    runtime = await result(sandbox.diagnostics.events(scope="runtime"))
    assert "runtime container running" in runtime.text
    with pytest.raises(InvalidRequestError):
        await result(sandbox.diagnostics.logs(scope="nope"))

    mine = {"suite": RUN_ID, "flavor": flavor.value}
    python = await result(flavor.sandbox.list(template="python", metadata=mine, **user.connection))
    assert [item.id for item in python.items] == [sandbox.id]
    node = await result(flavor.sandbox.list(template="node", metadata=mine, **user.connection))
    assert node.items == []


async def test_a_metrics_watch_ends_with_not_found_once_its_sandbox_is_killed(
    flavor: Flavor, user: User
) -> None:
    sandbox = await result(flavor.sandbox.create(**user.connection))
    killed_at: float | None = None
    with pytest.raises(NotFoundError) as gone:
        async for _ in each(sandbox.watch_metrics()):
            if killed_at is None:
                await result(flavor.kill_by_id(sandbox.id, user.connection))
                killed_at = time.monotonic()
    assert gone.value.code == "sandbox_not_found"
    assert killed_at is not None and time.monotonic() - killed_at < 10
    await result(sandbox.close())


async def test_refresh_metadata_renew_pause_resume_and_kill(flavor: Flavor, user: User) -> None:
    sandbox = await result(
        flavor.sandbox.create(
            metadata={"stage": "one"}, lifecycle=Lifecycle(auto_resume=False), **user.connection
        )
    )
    assert sandbox.expires_at is None  # no timeout: it does not expire

    await result(sandbox.set_metadata({"stage": "two", "owner": "ci"}))
    assert sandbox.metadata == {"stage": "two", "owner": "ci"}
    await result(sandbox.set_metadata({"owner": None}))
    assert sandbox.metadata == {"stage": "two"}

    await result(sandbox.renew(120))
    assert sandbox.expires_at is not None
    remaining = datetime.fromisoformat(sandbox.expires_at.replace("Z", "+00:00")) - datetime.now(timezone.utc)
    assert 100 < remaining.total_seconds() <= 120

    await result(sandbox.pause())
    assert sandbox.state in ("Pausing", "Paused")
    await _wait_for_state(sandbox, "Paused")
    with pytest.raises(ConflictError):
        await result(sandbox.commands.run("true"))
    await result(sandbox.resume())
    await _wait_for_state(sandbox, "Running")
    assert (await result(sandbox.commands.run("echo back"))).stdout == "back\n"

    await result(sandbox.kill())
    with pytest.raises(NotFoundError) as gone:
        await result(sandbox.refresh())
    assert gone.value.code == "sandbox_not_found"
    await result(sandbox.close())


async def test_lifecycle_plan_defaults_pause_to_disk_and_resume_on_use(flavor: Flavor, user: User) -> None:
    # Left out: the plan's defaults (Free: 15 minutes idle, 30 days paused), shown as set.
    default = await result(flavor.sandbox.create(**user.connection))
    assert default.lifecycle == SandboxLifecycle(
        on_timeout="kill",
        idle_timeout=900,
        processes_keep_awake=True,
        auto_resume=True,
        keep_memory=True,
        max_paused=30 * 86_400,
    )
    assert default.idle_at is not None and default.paused_to is None
    await result(default.kill())
    await result(default.close())

    sandbox = await result(
        flavor.sandbox.create(
            lifecycle=Lifecycle(on_timeout="pause", idle_timeout=NEVER, max_paused=3600), **user.connection
        )
    )
    assert sandbox.lifecycle is not None
    assert (sandbox.lifecycle.on_timeout, sandbox.lifecycle.idle_timeout) == ("pause", None)
    assert sandbox.lifecycle.max_paused == 3600 and sandbox.idle_at is None
    await result(sandbox.commands.run("echo kept > /root/kept.txt"))
    await result(sandbox.pause(to="disk"))
    assert sandbox.state in ("Pausing", "Paused")
    await _wait_for_state(sandbox, "Paused")
    assert sandbox.paused_to == "disk" and sandbox.memory_preserved is False
    # A command on the paused sandbox wakes it first, then runs: its files are where they were.
    assert (await result(sandbox.commands.run("cat /root/kept.txt"))).stdout == "kept\n"
    await result(sandbox.refresh())
    assert (sandbox.state, sandbox.paused_to) == ("Running", None)

    with pytest.raises(InvalidRequestError) as refused:
        await result(flavor.sandbox.create(lifecycle=Lifecycle(idle_timeout=0), **user.connection))
    assert refused.value.code == "invalid_request"
    await result(sandbox.kill())
    await result(sandbox.close())


async def _wait_for_state(sandbox: Sandbox | AsyncSandbox, state: str) -> None:
    deadline = time.monotonic() + 30
    while sandbox.state != state:
        assert time.monotonic() < deadline, f"still {sandbox.state}, waiting for {state}"
        await asyncio.sleep(0.2)
        await result(sandbox.refresh())


async def test_kill_by_id_at_class_level(flavor: Flavor, user: User) -> None:
    connection = user.connection
    sandbox = await result(flavor.sandbox.create(**connection))
    await result(flavor.kill_by_id(sandbox.id, connection))
    with pytest.raises(NotFoundError):
        await result(flavor.sandbox.connect(sandbox.id, **connection))
    with pytest.raises(NotFoundError) as unknown:
        await result(flavor.kill_by_id("sbx-doesnotexist", connection))
    assert unknown.value.code == "sandbox_not_found" and unknown.value.status == 404
    await result(sandbox.close())


def test_with_block_kills_the_sandbox_on_exit(user: User) -> None:
    connection = user.connection
    with Sandbox.create(**connection) as sandbox:
        assert sandbox.commands.run("echo inside").stdout == "inside\n"
    with pytest.raises(NotFoundError):
        Sandbox.connect(sandbox.id, **connection)
    # Also when the block raises, and when the block killed it already.
    with pytest.raises(RuntimeError), Sandbox.create(**connection) as failing:
        raise RuntimeError("the block failed")
    with pytest.raises(NotFoundError):
        Sandbox.connect(failing.id, **connection)
    with Sandbox.create(**connection) as killed:
        killed.kill()


async def test_async_with_block_kills_the_sandbox_on_exit(user: User) -> None:
    connection = user.connection
    async with await AsyncSandbox.create(**connection) as sandbox:
        assert (await sandbox.commands.run("echo inside")).stdout == "inside\n"
    with pytest.raises(NotFoundError):
        await AsyncSandbox.connect(sandbox.id, **connection)
    with pytest.raises(RuntimeError):
        async with await AsyncSandbox.create(**connection) as failing:
            raise RuntimeError("the block failed")
    with pytest.raises(NotFoundError):
        await AsyncSandbox.connect(failing.id, **connection)


async def test_get_endpoint_reaches_a_port_in_the_sandbox(sandbox: Sandbox | AsyncSandbox) -> None:
    await result(sandbox.files.write("/tmp/site/index.html", f"served from {sandbox.id}"))
    await result(sandbox.commands.run("python3 -m http.server 8000 --directory /tmp/site", background=True))
    endpoint = await result(sandbox.get_endpoint(8000, expires_in=120))
    assert endpoint.url.startswith("http://127.0.0.1:") and endpoint.token in endpoint.url
    expires = datetime.fromisoformat(endpoint.expires_at.replace("Z", "+00:00"))
    assert 100 < (expires - datetime.now(timezone.utc)).total_seconds() <= 121
    deadline = time.monotonic() + 20
    async with httpx.AsyncClient() as web:
        while True:
            response = await web.get(endpoint.url)
            if response.status_code == 200 or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)  # the server is still starting
    assert response.text == f"served from {sandbox.id}"


async def test_run_code_keeps_state_in_a_context_and_returns_rich_results(
    sandbox: Sandbox | AsyncSandbox,
) -> None:
    plain = await result(sandbox.run_code("x = 6 * 7\nprint('printed')\nx"))
    assert plain.results == [{"text/plain": "42"}] and plain.stdout == "printed\n" and plain.error is None

    context = await result(sandbox.create_code_context("python"))
    assert isinstance(context, CodeContext) and context.language == "python"
    await result(sandbox.run_code("counter = 1", context=context))
    counted = await result(sandbox.run_code("counter += 1\ncounter", context=context.id, language="python"))
    assert counted.results == [{"text/plain": "2"}] and counted.execution_count == 2

    rich = await result(
        sandbox.run_code(
            "class Table:\n"
            "    def _repr_html_(self): return '<b>cell</b>'\n"
            "    def __repr__(self): return 'Table()'\n"
            "Table()"
        )
    )
    assert rich.results == [{"text/plain": "Table()", "text/html": "<b>cell</b>"}]

    failed = await result(sandbox.run_code("1 / 0"))
    assert failed.error is not None and failed.error.name == "ZeroDivisionError"
    assert any("ZeroDivisionError" in line for line in failed.error.traceback)
