"""Real servers for the SDK's tests: `paddock serve` from the built CLI (gVisor, SQLite in a
temporary directory, an instance name of its own), with billing and payments pointed at the test
suite's local Stripe stand-in. Tests run each case with both clients (the `flavor` fixture)."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx
import pytest

from paddock import AsyncPaddock, AsyncSandbox, Paddock, Sandbox

from .support import Connection, Flavor, result

REPO = Path(__file__).resolve().parents[2]
RUN_ID = secrets.token_hex(4)
PASSWORD = "correct horse battery"
PRO_PRICE = "price_pro_monthly"
MERCHANTS = ("owner-sync", "owner-async", "agent-sync", "agent-async")
"""Stripe accounts of the payments tests' users, one per test and flavor."""
INSTANCE_LABEL = "paddock.instance"
"""The label the Docker runtime puts on every container of a server (packages/runtime/src/docker)."""


@dataclass
class Server:
    url: str
    instance: str
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    data_dir: str
    stripe_keys: dict[str, str] = field(default_factory=dict)

    def log_tail(self) -> str:
        return Path(self.log.name).read_text(errors="replace")[-4000:]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _start_server(instance: str, settings: dict[str, str]) -> Server:
    data_dir = tempfile.mkdtemp(prefix=f"{instance}-")
    port = _free_port()
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("PADDOCK_") and name != "DATABASE_URL"
    }
    env.update(
        PADDOCK_SERVER_HOST="127.0.0.1",
        PADDOCK_SERVER_PORT=str(port),
        PADDOCK_SERVER_DATA_DIR=data_dir,
        PADDOCK_SERVER_INSTANCE=instance,
        PADDOCK_SERVER_SECRET_KEY=secrets.token_hex(32),
        PADDOCK_SERVER_API_KEY=f"pdk_{secrets.token_hex(16)}",
        **settings,
    )
    log = open(Path(data_dir) / "server.log", "wb")  # noqa: SIM115 (closed in _stop_server)
    command = ["node", "packages/cli/bin/paddock.js", "serve"]
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    server = Server(f"http://127.0.0.1:{port}", instance, process, log, data_dir)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"paddock serve exited with {process.returncode}:\n{server.log_tail()}")
        try:
            if httpx.get(f"{server.url}/health", timeout=2).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    _stop_server(server)
    raise RuntimeError(f"paddock serve did not answer /health within 60 s:\n{server.log_tail()}")


def _containers_of(instance: str) -> list[str]:
    listing = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label={INSTANCE_LABEL}={instance}"],
        check=True,
        capture_output=True,
        text=True,
    )
    return listing.stdout.split()


def _stop_server(server: Server) -> list[str]:
    """Stops the server by its PID and answers the containers it left behind (removing them)."""
    server.process.send_signal(signal.SIGTERM)
    try:
        server.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()
    server.log.close()
    left = _containers_of(server.instance)
    if left:
        subprocess.run(["docker", "rm", "-f", *left], check=False, capture_output=True)
    shutil.rmtree(server.data_dir, ignore_errors=True)
    return left


@pytest.fixture(scope="session")
def event_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """One loop for the whole run, so async sandboxes can be shared across tests."""
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture(scope="session")
def stripe() -> Iterator[tuple[str, dict[str, str]]]:
    """The local Stripe stand-in: its URL and the secret keys of its accounts."""
    process = subprocess.Popen(
        ["node", "--import", "tsx", "sdk-python/tests/fake-stripe-server.ts", PRO_PRICE, *MERCHANTS],
        cwd=REPO,
        stdout=subprocess.PIPE,
    )
    assert process.stdout is not None
    announced = json.loads(process.stdout.readline())
    yield announced["url"], announced["keys"]
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=10)


@pytest.fixture(scope="session")
def server(stripe: tuple[str, dict[str, str]]) -> Iterator[Server]:
    """The server most tests use: gVisor, with billing and payments on the Stripe stand-in."""
    stripe_url, keys = stripe
    started = _start_server(
        f"pytest-{RUN_ID}",
        {
            "PADDOCK_SECURE_RUNTIME_TYPE": "gvisor",
            "PADDOCK_BILLING_STRIPE_SECRET_KEY": keys["platform"],
            "PADDOCK_BILLING_STRIPE_WEBHOOK_SECRET": f"whsec_{secrets.token_hex(16)}",
            "PADDOCK_BILLING_STRIPE_API_BASE": stripe_url,
            "PADDOCK_BILLING_PRO_PRICE_ID": PRO_PRICE,
            "PADDOCK_PAYMENTS_STRIPE_API_BASE": stripe_url,
        },
    )
    started.stripe_keys = keys
    yield started
    left = _stop_server(started)
    assert left == [], f"containers left behind by the tests: {left}"


@pytest.fixture(scope="session")
def runc_server() -> Iterator[Server]:
    """A server on runc, for what must hold under both runtimes (network policies)."""
    started = _start_server(f"pytest-{RUN_ID}-runc", {"PADDOCK_SECURE_RUNTIME_TYPE": ""})
    yield started
    left = _stop_server(started)
    assert left == [], f"containers left behind by the tests: {left}"


@dataclass(frozen=True)
class User:
    email: str
    base_url: str
    api_key: str
    """An unscoped API key."""

    @property
    def connection(self) -> Connection:
        return {"api_key": self.api_key, "base_url": self.base_url}


def sign_up(base_url: str, name: str) -> User:
    email = f"{name}-{RUN_ID}@example.com"
    Paddock.signup(email, PASSWORD, base_url=base_url)
    with Paddock.login(email, PASSWORD, base_url=base_url).client as client:
        secret = client.keys.create(name=name).secret
    return User(email, base_url, secret)


@pytest.fixture(scope="session")
def user(server: Server) -> User:
    return sign_up(server.url, "owner")


@pytest.fixture(scope="session", params=["sync", "async"])
def flavor(request: pytest.FixtureRequest) -> Flavor:
    return Flavor(request.param)


@pytest.fixture
async def client(flavor: Flavor, user: User) -> AsyncIterator[Paddock | AsyncPaddock]:
    """The account's client in the test's flavor, on an unscoped key."""
    opened = flavor.paddock(user.api_key, base_url=user.base_url)
    yield opened
    await result(opened.close())


@pytest.fixture(scope="session")
async def sandbox(flavor: Flavor, user: User) -> AsyncIterator[Sandbox | AsyncSandbox]:
    """A sandbox shared by the tests that only read and write inside it."""
    with Paddock(user.api_key, base_url=user.base_url) as owner:
        owner.secrets.set("SHARED_TOKEN", f"token-{flavor.value}")
    created: Sandbox | AsyncSandbox = await result(
        flavor.sandbox.create(
            "python",
            timeout=900,
            env={"GREETING": "hello"},
            metadata={"suite": RUN_ID, "flavor": flavor.value},
            secrets=["SHARED_TOKEN"],
            **user.connection,
        )
    )
    yield created
    await result(created.kill())
    await result(created.close())
