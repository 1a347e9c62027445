"""The account's own templates: built from a directory or from steps, the log followed live, started
from, kept from other accounts, cancelled at a timeout, deleted."""

from __future__ import annotations

import asyncio
import re
import tarfile
import time
from pathlib import Path

import pytest

from paddock import (
    AsyncPaddock,
    BuildLogEntry,
    CopyStep,
    InvalidRequestError,
    NotFoundError,
    Paddock,
    RunStep,
    TemplateBuildError,
    TimeoutError,
)
from paddock._context import pack

from .conftest import Server, User, sign_up
from .support import Flavor, result


def _write(directory: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return directory


def test_pack_leaves_out_what_dockerignore_names_and_keeps_the_dockerfile(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            ".dockerignore": "# secrets stay home\nsecret.txt\n*.log\n/cache\n**/*.tmp\ndocker/\n!keep.log\n",
            "Dockerfile": "FROM ubuntu\n",
            "docker/Build.dockerfile": "FROM ubuntu\n",
            "docker/other.txt": "left out with its directory",
            "app/main.py": "print('hi')\n",
            "app/secret.txt": "only the top-level one is named",
            "app/deep/x.tmp": "",
            "secret.txt": "",
            "debug.log": "",
            "keep.log": "",
            "cache/blob": "",
        },
    )
    with pack(tmp_path, always=["docker/Build.dockerfile"]) as archive, tarfile.open(fileobj=archive) as tar:
        names = sorted(tar.getnames())
        assert all(member.uid == 0 and member.uname == "" for member in tar.getmembers())
    assert names == [
        ".dockerignore",
        "Dockerfile",
        "app",
        "app/deep",
        "app/main.py",
        "app/secret.txt",
        "docker",
        "docker/Build.dockerfile",
        "keep.log",
    ]
    with pytest.raises(NotADirectoryError):
        pack(tmp_path / "Dockerfile")


async def test_build_from_a_directory_follows_its_log_and_starts_sandboxes(
    flavor: Flavor, client: Paddock | AsyncPaddock, user: User, server: Server, tmp_path: Path
) -> None:
    name = f"py-greeter-{flavor.value}"
    _write(
        tmp_path,
        {
            "Dockerfile": f"FROM ubuntu\nCOPY . /ctx/\nRUN echo built {flavor.value} > /ctx/built.txt\n",
            "greeting.txt": "hello from the context\n",
            ".dockerignore": "secret.txt\n*.log\n",
            "secret.txt": "never leaves this machine",
            "debug.log": "noise",
        },
    )
    entries: list[BuildLogEntry] = []
    build = await result(
        client.templates.build(name, tmp_path, description="Greets", on_log=entries.append, timeout=600)
    )
    assert build.status == "ready" and build.image_bytes
    messages = [entry.message for entry in entries]
    assert [entry.seq for entry in entries] == list(range(len(entries))), "each entry once, in order"
    assert any(line.startswith("step 1/2 (Dockerfile line 2): COPY . /ctx/") for line in messages), messages
    assert any(line.startswith("step 2/2 (Dockerfile line 3): RUN echo built") for line in messages), messages
    assert messages[-1].startswith("built "), messages

    template = await result(client.templates.get(name))
    assert (template.description, template.current_build_id) == ("Greets", build.id)
    assert [item.id for item in template.builds] == [build.id]
    assert name in [item.name for item in await result(client.templates.list())]
    page = await result(client.templates.logs(name, build.id, from_=1))
    assert [entry.message for entry in page.entries] == messages[1:] and page.status == "ready"

    sandbox = await result(flavor.sandbox.create(name, timeout=300, **user.connection))
    try:
        greeting = await result(sandbox.commands.run("cat /ctx/greeting.txt"))
        assert greeting.stdout == "hello from the context\n"
        assert (await result(sandbox.commands.run("cat /ctx/built.txt"))).stdout == f"built {flavor.value}\n"
        listed = await result(sandbox.commands.run("ls -A /ctx"))
        assert listed.stdout.split() == [".dockerignore", "Dockerfile", "built.txt", "greeting.txt"]
    finally:
        await result(sandbox.kill())
        await result(sandbox.close())

    stranger = sign_up(server.url, f"stranger-{flavor.value}")
    async with _opened(flavor, stranger) as theirs:
        with pytest.raises(NotFoundError) as refused:
            await result(theirs.templates.get(name))
        assert refused.value.code == "template_not_found"
        with pytest.raises(NotFoundError):
            await result(theirs.templates.delete(name))
        with pytest.raises(NotFoundError):
            await result(theirs.templates.logs(name, build.id))
        with pytest.raises(NotFoundError):
            await result(theirs.templates.cancel(name, build.id))

    await result(client.templates.delete(name))
    with pytest.raises(NotFoundError) as gone:
        await result(client.templates.get(name))
    assert gone.value.code == "template_not_found"


async def test_a_failing_run_raises_with_its_dockerfile_line(
    flavor: Flavor, client: Paddock | AsyncPaddock, tmp_path: Path
) -> None:
    name = f"py-broken-{flavor.value}"
    _write(
        tmp_path,
        {
            "docker/Broken.dockerfile": (
                "FROM ubuntu\nRUN echo fine\nRUN echo going wrong >&2; exit 3\nRUN echo never\n"
            ),
            ".dockerignore": "docker/\n",
        },
    )
    entries: list[BuildLogEntry] = []
    with pytest.raises(TemplateBuildError) as failed:
        await result(
            client.templates.build(
                name, tmp_path, dockerfile="docker/Broken.dockerfile", on_log=entries.append, timeout=600
            )
        )
    error = failed.value
    assert (error.code, error.failed_step, error.build.status) == ("template_build_failed", 2, "error")
    assert "Dockerfile line 3" in error.reason and "exited with code 3" in error.reason, error.reason
    assert error.reason in str(error)
    messages = [entry.message for entry in entries]
    assert "going wrong" in messages and messages[-1] == error.reason, messages
    assert not any("RUN echo never" in line for line in messages)

    detail = await result(client.templates.get(name))
    assert detail.current_build_id is None and [item.id for item in detail.builds] == [error.build_id]
    await result(client.templates.delete(name))

    # Refused before anything runs: a Dockerfile the server cannot take, a name it does not allow.
    _write(tmp_path, {"docker/Onbuild.dockerfile": "FROM ubuntu\nONBUILD RUN true\n"})
    absolute = str(tmp_path / "docker/Onbuild.dockerfile")
    with pytest.raises(InvalidRequestError) as unreadable:
        await result(client.templates.build(name, tmp_path, dockerfile=absolute))
    assert unreadable.value.code == "invalid_template_build" and "line 2" in unreadable.value.message
    with pytest.raises(InvalidRequestError):
        await result(client.templates.build_from_steps("Not A Name", "ubuntu", [RunStep("true")]))


async def test_build_from_steps_with_uploaded_files(
    flavor: Flavor, client: Paddock | AsyncPaddock, tmp_path: Path
) -> None:
    name = f"py-tooled-{flavor.value}"
    files = await result(client.templates.upload_files(_write(tmp_path, {"tool.sh": "echo tool ran\n"})))
    assert re.fullmatch(r"[a-f0-9]{64}", files)
    entries: list[BuildLogEntry] = []
    build = await result(
        client.templates.build_from_steps(
            name,
            "ubuntu",
            [
                CopyStep(files, "tool.sh", "/usr/local/bin/tool", mode=0o755),
                RunStep("tool > /tool.out && cat /tool.out"),
            ],
            on_log=entries.append,
            timeout=600,
        )
    )
    assert build.status == "ready"
    messages = [entry.message for entry in entries]
    assert "tool ran" in messages, messages
    assert any(line.startswith("step 1/2: COPY tool.sh /usr/local/bin/tool") for line in messages), messages
    await result(client.templates.delete(name))


async def test_a_step_quiet_for_longer_than_the_request_timeout_is_followed_on(
    flavor: Flavor, user: User
) -> None:
    name = f"py-quiet-{flavor.value}"
    entries: list[BuildLogEntry] = []
    async with _opened(flavor, user, request_timeout=2) as impatient:
        build = await result(
            impatient.templates.build_from_steps(
                name,
                "ubuntu",
                [RunStep("echo dozing; sleep 7; echo awake")],
                on_log=entries.append,
                timeout=600,
            )
        )
        assert build.status == "ready"
        messages = [entry.message for entry in entries]
        assert messages.index("dozing") < messages.index("awake"), messages
        assert [entry.seq for entry in entries] == list(range(len(entries))), "each entry once, in order"
        await result(impatient.templates.delete(name))


async def test_a_build_past_its_timeout_is_cancelled(flavor: Flavor, client: Paddock | AsyncPaddock) -> None:
    name = f"py-slow-{flavor.value}"
    with pytest.raises(TimeoutError) as late:
        await result(
            client.templates.build_from_steps(
                name, "ubuntu", [RunStep("echo started; sleep 300")], timeout=15
            )
        )
    assert late.value.code == "template_build_timeout"
    (build,) = (await result(client.templates.get(name))).builds
    deadline = time.monotonic() + 60
    while build.status in ("waiting", "building") and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        build = await result(client.templates.get_build(name, build.id))
    assert build.status == "cancelled", build
    await result(client.templates.delete(name))


class _opened:
    """A client of ``user``'s in the test's flavor, closed on leaving."""

    def __init__(self, flavor: Flavor, user: User, request_timeout: float | None = None) -> None:
        self._client = flavor.paddock(user.api_key, base_url=user.base_url, request_timeout=request_timeout)

    async def __aenter__(self) -> Paddock | AsyncPaddock:
        return self._client

    async def __aexit__(self, *_: object) -> None:
        await result(self._client.close())
