"""``client.secrets``: values the server keeps encrypted and injects into sandboxes by name
(``Sandbox.create(secrets=...)``). Values go in; only names and timestamps come back."""

from __future__ import annotations

import builtins
from urllib.parse import quote

from ._resource import Resource, TransportT, endpoint
from ._transport import Call, Request, items, model, nothing
from .models import SecretInfo


class Secrets(Resource[TransportT]):
    """Works with a session, an unscoped key or a key scoped to ``secrets``."""

    @endpoint
    def set(self, name: str, value: str) -> Call[SecretInfo]:
        """Creates the secret or replaces its value."""
        return Call(Request("POST", "/secrets", json={"name": name, "value": value}), model(SecretInfo))

    @endpoint
    def list(self) -> Call[builtins.list[SecretInfo]]:
        return Call(Request("GET", "/secrets"), items(SecretInfo))

    @endpoint
    def delete(self, name: str) -> Call[None]:
        return Call(Request("DELETE", f"/secrets/{quote(name, safe='')}"), nothing)
