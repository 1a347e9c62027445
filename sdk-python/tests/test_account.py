"""The account's client: sign-up and log-in, keys, secrets, memory and usage."""

from __future__ import annotations

import builtins
import re
from datetime import datetime, timedelta, timezone

import pytest

from paddock import (
    AsyncPaddock,
    AsyncSandbox,
    AuthenticationError,
    ConflictError,
    NotFoundError,
    Paddock,
    PermissionError,
    Sandbox,
)

from .conftest import PASSWORD, RUN_ID, Server, User
from .support import Flavor, result


async def test_signup_login_me_and_logout(flavor: Flavor, server: Server) -> None:
    email = f"login-{flavor.value}-{RUN_ID}@example.com"
    account = await result(flavor.paddock.signup(email, PASSWORD, base_url=server.url))
    assert account.email == email and account.plan == "free"
    with pytest.raises(ConflictError) as taken:
        await result(flavor.paddock.signup(email, PASSWORD, base_url=server.url))
    assert taken.value.code == "email_taken"
    with pytest.raises(AuthenticationError):
        await result(flavor.paddock.login(email, "not the password", base_url=server.url))

    client, session = await result(flavor.paddock.login(email, PASSWORD, base_url=server.url))
    assert session.account.id == account.id and session.token
    assert (await result(client.me())).id == account.id
    await result(client.logout())
    with pytest.raises(AuthenticationError):
        await result(client.me())
    await result(client.close())


async def test_keys_create_list_rotate_delete(
    flavor: Flavor, client: Paddock | AsyncPaddock, user: User
) -> None:
    expires = datetime.now(timezone.utc) + timedelta(days=1)
    name = f"ci-{flavor.value}"
    created = await result(client.keys.create(name=name, scope="sandboxes", expires_at=expires))
    assert created.key.scope == "sandboxes" and created.key.name == name
    assert created.key.expires_at is not None
    stored = datetime.fromisoformat(created.key.expires_at.replace("Z", "+00:00"))
    assert abs((stored - expires).total_seconds()) < 1
    assert created.key.id in [key.id for key in await result(client.keys.list())]
    # The key works for its surface.
    await result(flavor.sandbox.list(api_key=created.secret, base_url=user.base_url))

    rotated = await result(client.keys.rotate(created.key.id))
    assert rotated.key.id == created.key.id and rotated.secret != created.secret
    with pytest.raises(AuthenticationError):
        await result(flavor.sandbox.list(api_key=created.secret, base_url=user.base_url))
    await result(flavor.sandbox.list(api_key=rotated.secret, base_url=user.base_url))

    await result(client.keys.delete(created.key.id))
    assert created.key.id not in [key.id for key in await result(client.keys.list())]
    with pytest.raises(AuthenticationError):
        await result(flavor.sandbox.list(api_key=rotated.secret, base_url=user.base_url))
    with pytest.raises(NotFoundError) as missing:
        await result(client.keys.delete(created.key.id))
    assert missing.value.code == "key_not_found" and missing.value.status == 404


async def test_a_wrong_key_is_an_authentication_error(flavor: Flavor, server: Server) -> None:
    client = flavor.paddock("pk_not_a_real_key", base_url=server.url)
    with pytest.raises(AuthenticationError) as refused:
        await result(client.me())
    assert refused.value.status == 401 and refused.value.code == "unauthorized"
    assert not refused.value.retryable
    await result(client.close())
    with pytest.raises(AuthenticationError):
        await result(flavor.sandbox.create(api_key="pk_not_a_real_key", base_url=server.url))


async def test_a_scoped_key_is_refused_usage_with_a_permission_error(
    flavor: Flavor, client: Paddock | AsyncPaddock, user: User
) -> None:
    scoped = await result(client.keys.create(name=f"memory-only-{flavor.value}", scope="memory"))
    limited = flavor.paddock(scoped.secret, base_url=user.base_url)
    with pytest.raises(PermissionError) as refused:
        await result(limited.usage.get())
    assert refused.value.code == "scope_forbidden" and refused.value.status == 403
    # The SDK's PermissionError is also Python's.
    assert isinstance(refused.value, builtins.PermissionError)
    # Its own surface answers.
    assert (await result(limited.memory.list())).pagination.page == 1
    await result(limited.close())
    await result(client.keys.delete(scoped.key.id))


async def test_environment_variables_supply_the_key_and_the_address(
    flavor: Flavor, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PADDOCK_API_KEY", user.api_key)
    monkeypatch.setenv("PADDOCK_BASE_URL", user.base_url)
    client = flavor.paddock()
    assert (await result(client.me())).email == user.email
    await result(client.close())
    assert (await result(flavor.sandbox.list())).pagination.page == 1
    monkeypatch.setenv("PADDOCK_API_KEY", "pk_wrong")
    with pytest.raises(AuthenticationError):
        await result(flavor.sandbox.list())


async def test_secrets_set_list_delete(flavor: Flavor, client: Paddock | AsyncPaddock) -> None:
    name = f"API_TOKEN_{flavor.value.upper()}"
    first = await result(client.secrets.set(name, "one"))
    assert first.name == name
    replaced = await result(client.secrets.set(name, "two"))
    assert replaced.created_at == first.created_at
    assert name in [secret.name for secret in await result(client.secrets.list())]
    await result(client.secrets.delete(name))
    assert name not in [secret.name for secret in await result(client.secrets.list())]
    with pytest.raises(NotFoundError) as missing:
        await result(client.secrets.delete(name))
    assert missing.value.code == "secret_not_found"


async def test_memory_add_list_search_delete(flavor: Flavor, client: Paddock | AsyncPaddock) -> None:
    tag = f"notes-{flavor.value}"
    entry = await result(
        client.memory.add(
            "The staging database lives on port 5433", metadata={"source": "runbook", "n": 1}, tags=[tag]
        )
    )
    other = await result(client.memory.add("Lunch is at noon", tags=[tag]))
    assert entry.metadata == {"source": "runbook", "n": 1} and entry.tags == [tag]

    listed = await result(client.memory.list(tag=tag, page_size=10))
    assert [item.id for item in listed.items] == [other.id, entry.id]  # newest first
    assert listed.pagination.total_items == 2

    hits = await result(client.memory.search("staging database", tag=tag, limit=5))
    assert [hit.id for hit in hits] == [entry.id]
    assert hits[0].score > 0 and "staging" in hits[0].snippet.lower()

    await result(client.memory.delete(entry.id))
    assert await result(client.memory.search("staging database", tag=tag)) == []
    with pytest.raises(NotFoundError):
        await result(client.memory.delete(entry.id))
    await result(client.memory.delete(other.id))


async def test_usage_summary_and_per_sandbox_minutes(
    client: Paddock | AsyncPaddock, sandbox: Sandbox | AsyncSandbox
) -> None:
    summary = await result(client.usage.get())
    assert summary.plan.id == "free" and summary.included_minutes == 100
    assert summary.running_sandboxes >= 1 and not summary.limit_reached
    assert summary.remaining_minutes is not None and summary.remaining_minutes <= 100
    page = await result(client.usage.sandboxes(page_size=200))
    assert sandbox.id in [usage.sandbox_id for usage in page.items]
    assert page.period == summary.period.id
    # One entry for each day of the month so far (UTC), adding up to the minutes used.
    today = datetime.now(timezone.utc).date()
    assert [day.date for day in summary.days] == [
        today.replace(day=number).isoformat() for number in range(1, today.day + 1)
    ]
    assert abs(sum(day.minutes for day in summary.days) - summary.used_minutes) < 0.01


async def test_e2b_shaped_keys(flavor: Flavor, client: Paddock | AsyncPaddock, user: User) -> None:
    created = await result(client.keys.create(name=f"e2b-{flavor.value}", format="e2b"))
    assert re.fullmatch(r"e2b_[0-9a-f]{40}", created.secret)
    assert created.key.prefix == created.secret[:10]
    # An ordinary key: it drives Paddock's own API, and rotation keeps its shape.
    await result(flavor.sandbox.list(api_key=created.secret, base_url=user.base_url))
    rotated = await result(client.keys.rotate(created.key.id))
    assert re.fullmatch(r"e2b_[0-9a-f]{40}", rotated.secret)
    await result(client.keys.delete(created.key.id))
