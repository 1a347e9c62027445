"""Commands: buffered runs, streamed runs (callbacks and iterators), background runs, failures."""

from __future__ import annotations

import asyncio
import builtins
import time

import pytest

from paddock import (
    AsyncSandbox,
    CommandExit,
    CommandExitError,
    PaddockError,
    Sandbox,
    Stderr,
    Stdout,
    TimeoutError,
)

from .conftest import User
from .support import Flavor, collect, each, result, timed

TICKS = "for i in 1 2 3; do echo $i; sleep 0.4; done"
"""Three lines 0.4 s apart: output that arrives in pieces proves the call streams."""


async def test_run_returns_the_output_and_raises_on_a_non_zero_exit(sandbox: Sandbox | AsyncSandbox) -> None:
    done = await result(sandbox.commands.run("echo out; echo err >&2"))
    assert (done.stdout, done.stderr, done.exit_code) == ("out\n", "err\n", 0)

    with pytest.raises(CommandExitError) as failed:
        await result(sandbox.commands.run("echo partial; echo broken >&2; exit 3"))
    assert (failed.value.exit_code, failed.value.stdout, failed.value.stderr) == (3, "partial\n", "broken\n")
    assert isinstance(failed.value, PaddockError) and failed.value.code == "command_exit"
    assert "broken" in str(failed.value)


async def test_run_takes_a_directory_variables_and_a_timeout(sandbox: Sandbox | AsyncSandbox) -> None:
    await result(sandbox.files.make_dir("/tmp/work"))
    done = await result(sandbox.commands.run('pwd; echo "$NAME"', cwd="/tmp/work", envs={"NAME": "paddock"}))
    assert done.stdout == "/tmp/work\npaddock\n"

    started = time.monotonic()
    with pytest.raises(CommandExitError) as killed:
        await result(sandbox.commands.run("sleep 30", timeout=1))
    assert killed.value.exit_code != 0 and time.monotonic() - started < 10


async def test_an_answer_slower_than_the_request_timeout_is_a_timeout_error(
    flavor: Flavor, sandbox: Sandbox | AsyncSandbox, user: User
) -> None:
    started = time.monotonic()
    with pytest.raises(TimeoutError) as per_call:
        await result(sandbox.commands.run("sleep 3", request_timeout=0.5))
    assert time.monotonic() - started < 2.5
    assert per_call.value.retryable and per_call.value.code == "timeout"
    assert isinstance(per_call.value, builtins.TimeoutError)

    # The connection's own default, for every call of that object.
    impatient = await result(flavor.sandbox.connect(sandbox.id, request_timeout=0.5, **user.connection))
    with pytest.raises(TimeoutError):
        await result(impatient.commands.run("sleep 3"))
    await result(impatient.close())


async def test_a_background_command_returns_at_once_and_keeps_running(
    flavor: Flavor, sandbox: Sandbox | AsyncSandbox
) -> None:
    marker = f"/tmp/background-{flavor.value}"
    started = time.monotonic()
    launched = await result(sandbox.commands.run(f"sleep 1; echo finished > {marker}", background=True))
    assert launched.exit_code == -1 and time.monotonic() - started < 1
    deadline = time.monotonic() + 15
    while not [entry for entry in await result(sandbox.files.list("/tmp")) if entry.path == marker]:
        assert time.monotonic() < deadline, "the background command never wrote its file"
        await asyncio.sleep(0.2)
    assert await result(sandbox.files.read(marker)) == "finished\n"


async def test_callbacks_get_the_output_as_it_arrives(sandbox: Sandbox | AsyncSandbox) -> None:
    seen: list[tuple[float, str]] = []
    done = await result(
        sandbox.commands.run(
            f"{TICKS}; echo warning >&2",
            on_stdout=lambda text: seen.append((time.monotonic(), text)),
            on_stderr=lambda text: seen.append((time.monotonic(), f"stderr:{text}")),
        )
    )
    finished = time.monotonic()
    assert (done.stdout, done.stderr, done.exit_code) == ("1\n2\n3\n", "warning\n", 0)
    assert "".join(text for _, text in seen) == "1\n2\n3\nstderr:warning\n"
    assert finished - seen[0][0] > 0.6  # the first line came long before the end

    with pytest.raises(CommandExitError) as failed:
        await result(sandbox.commands.run("echo last words; exit 5", on_stdout=lambda text: None))
    assert (failed.value.exit_code, failed.value.stdout) == (5, "last words\n")


async def test_stream_yields_output_as_it_comes_then_the_exit(sandbox: Sandbox | AsyncSandbox) -> None:
    events = await collect(sandbox.commands.stream("echo out; sleep 0.2; echo err >&2; exit 4"))
    assert events == [Stdout("out\n"), Stderr("err\n"), CommandExit(4)]

    arrivals = await timed(sandbox.commands.stream(TICKS, cwd="/tmp", envs={"UNUSED": "1"}, timeout=30))
    assert [event for _, event in arrivals] == [Stdout("1\n"), Stdout("2\n"), Stdout("3\n"), CommandExit(0)]
    assert arrivals[-1][0] - arrivals[0][0] > 0.6


async def test_a_stream_whose_sandbox_is_killed_ends_with_an_error(flavor: Flavor, user: User) -> None:
    sandbox = await result(flavor.sandbox.create(**user.connection))
    events = sandbox.commands.stream("echo started; sleep 600")
    killed_at = 0.0
    with pytest.raises(PaddockError) as ended:
        async for event in each(events):
            if isinstance(event, Stdout) and not killed_at:
                killed_at = time.monotonic()
                # Another client, as a second program would.
                await result(flavor.kill_by_id(sandbox.id, user.connection))
    assert killed_at and time.monotonic() - killed_at < 10
    assert not isinstance(ended.value, CommandExitError) and ended.value.code
    await result(sandbox.close())
