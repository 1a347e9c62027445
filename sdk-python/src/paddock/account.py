"""``Paddock`` and ``AsyncPaddock``: sign-up, log-in, API keys, secrets, memory, usage, billing,
payments and the account's templates."""

from __future__ import annotations

import builtins
from datetime import datetime
from types import TracebackType
from typing import Literal, NamedTuple
from urllib.parse import quote

from ._resource import Resource, TransportT, endpoint
from ._transport import AsyncTransport, Call, Connection, Request, SyncTransport, items, model, nothing
from ._wire import timestamp
from .billing import Billing
from .memory import Memory
from .models import Account, ApiKey, ApiKeyWithSecret, KeyScope, Session
from .payments import Payments
from .secrets import Secrets
from .templates import AsyncTemplates, Templates
from .usage import Usage
from .volumes import Volumes


class Keys(Resource[TransportT]):
    """``client.keys``: the account's API keys (a session or an unscoped key only)."""

    @endpoint
    def create(
        self,
        *,
        name: str | None = None,
        scope: KeyScope | None = None,
        expires_at: datetime | str | None = None,
        format: Literal["paddock", "e2b"] | None = None,
    ) -> Call[ApiKeyWithSecret]:
        """A new key; its ``secret`` is shown this once. ``scope`` limits it to one surface
        (``sandboxes``, ``memory`` or ``secrets``); without one it reaches everything.
        ``format="e2b"`` shapes the secret ``e2b_…`` for E2B's SDKs; it is the same kind of key."""
        body = {
            **({"name": name} if name is not None else {}),
            **({"scope": scope} if scope is not None else {}),
            **({"expiresAt": timestamp(expires_at)} if expires_at is not None else {}),
            **({"format": format} if format is not None else {}),
        }
        return Call(Request("POST", "/keys", json=body), model(ApiKeyWithSecret))

    @endpoint
    def list(self) -> Call[builtins.list[ApiKey]]:
        return Call(Request("GET", "/keys"), items(ApiKey))

    @endpoint
    def delete(self, key_id: str) -> Call[None]:
        return Call(Request("DELETE", f"/keys/{quote(key_id, safe='')}"), nothing)

    @endpoint
    def rotate(self, key_id: str) -> Call[ApiKeyWithSecret]:
        """A new secret for the key; the old one stops working."""
        return Call(Request("POST", f"/keys/{quote(key_id, safe='')}/rotate"), model(ApiKeyWithSecret))


class PaddockBase(Resource[TransportT]):
    """What ``Paddock`` and ``AsyncPaddock`` share."""

    def __init__(self, transport: TransportT) -> None:
        super().__init__(transport)
        self.keys = Keys(transport)
        self.secrets = Secrets(transport)
        """Works with a session, an unscoped key or a key scoped to ``secrets``."""
        self.memory = Memory(transport)
        """Works with a session, an unscoped key or a key scoped to ``memory``."""
        self.usage = Usage(transport)
        """Works with a session or an unscoped key only."""
        self.billing = Billing(transport)
        self.payments = Payments(transport)
        self.volumes = Volumes(transport)
        """The account's volumes; a session, an unscoped key or a key scoped to ``sandboxes``."""

    @endpoint
    def me(self) -> Call[Account]:
        return Call(Request("GET", "/auth/me"), model(Account))

    @endpoint
    def logout(self) -> Call[None]:
        """Ends the session this client logged in with."""
        return Call(Request("POST", "/auth/logout"), nothing)


def _signup_call(email: str, password: str) -> Call[Account]:
    return Call(Request("POST", "/auth/signup", json={"email": email, "password": password}), model(Account))


def _login_call(email: str, password: str) -> Call[Session]:
    return Call(Request("POST", "/auth/login", json={"email": email, "password": password}), model(Session))


def _anonymous(base_url: str | None, request_timeout: float | None) -> Connection:
    """Sign-up and log-in send no credentials, not even PADDOCK_API_KEY's."""
    return Connection.resolve("", base_url, request_timeout)


class Login(NamedTuple):
    """``client, session = Paddock.login(...)``, or ``.client`` and ``.session``."""

    client: Paddock
    session: Session


class Paddock(PaddockBase[SyncTransport]):
    """The account's client. ``api_key`` (an API key or a session token) defaults to
    PADDOCK_API_KEY, ``base_url`` to PADDOCK_BASE_URL then http://127.0.0.1:8080, and
    ``request_timeout`` to 60 seconds."""

    def __init__(
        self, api_key: str | None = None, *, base_url: str | None = None, request_timeout: float | None = None
    ) -> None:
        super().__init__(SyncTransport(Connection.resolve(api_key, base_url, request_timeout)))
        self.templates = Templates(self._transport)
        """The account's own templates; a session, an unscoped key or a key scoped to ``sandboxes``."""

    @staticmethod
    def signup(
        email: str, password: str, *, base_url: str | None = None, request_timeout: float | None = None
    ) -> Account:
        return SyncTransport.once(_anonymous(base_url, request_timeout), _signup_call(email, password))

    @classmethod
    def login(
        cls, email: str, password: str, *, base_url: str | None = None, request_timeout: float | None = None
    ) -> Login:
        """Logs in; the returned client authenticates with the session's token."""
        connection = _anonymous(base_url, request_timeout)
        session = SyncTransport.once(connection, _login_call(email, password))
        client = cls(session.token, base_url=connection.base_url, request_timeout=connection.request_timeout)
        return Login(client, session)

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Paddock:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


class AsyncLogin(NamedTuple):
    client: AsyncPaddock
    session: Session


class AsyncPaddock(PaddockBase[AsyncTransport]):
    """As ``Paddock``, with asyncio: every call is awaited."""

    def __init__(
        self, api_key: str | None = None, *, base_url: str | None = None, request_timeout: float | None = None
    ) -> None:
        super().__init__(AsyncTransport(Connection.resolve(api_key, base_url, request_timeout)))
        self.templates = AsyncTemplates(self._transport)

    @staticmethod
    async def signup(
        email: str, password: str, *, base_url: str | None = None, request_timeout: float | None = None
    ) -> Account:
        return await AsyncTransport.once(_anonymous(base_url, request_timeout), _signup_call(email, password))

    @classmethod
    async def login(
        cls, email: str, password: str, *, base_url: str | None = None, request_timeout: float | None = None
    ) -> AsyncLogin:
        connection = _anonymous(base_url, request_timeout)
        session = await AsyncTransport.once(connection, _login_call(email, password))
        client = cls(session.token, base_url=connection.base_url, request_timeout=connection.request_timeout)
        return AsyncLogin(client, session)

    async def close(self) -> None:
        await self._transport.close()

    async def __aenter__(self) -> AsyncPaddock:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.close()
