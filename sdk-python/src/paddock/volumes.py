"""``client.volumes``: named volumes of the account, each holding at most its size, mounted into
any number of sandboxes (``Sandbox.create(volumes=[VolumeMount(...)])``) and outliving them."""

from __future__ import annotations

import builtins
from typing import Any
from urllib.parse import quote

from ._resource import Resource, TransportT, endpoint
from ._transport import Call, Request, items, model, nothing
from .models import VolumeInfo


class Volumes(Resource[TransportT]):
    """Works with a session, an unscoped key or a key scoped to ``sandboxes``."""

    @endpoint
    def create(self, name: str, *, size: str | None = None) -> Call[VolumeInfo]:
        """Creates an empty volume; ``size`` like ``"1Gi"`` (None: the server's default)."""
        body: dict[str, Any] = {"name": name}
        if size is not None:
            body["size"] = size
        return Call(Request("POST", "/volumes", json=body), model(VolumeInfo))

    @endpoint
    def list(self) -> Call[builtins.list[VolumeInfo]]:
        return Call(Request("GET", "/volumes"), items(VolumeInfo))

    @endpoint
    def get(self, volume_id: str) -> Call[VolumeInfo]:
        return Call(Request("GET", f"/volumes/{quote(volume_id, safe='')}"), model(VolumeInfo))

    @endpoint
    def delete(self, volume_id: str) -> Call[None]:
        """Deletes the volume and its files; ``ConflictError`` (``volume_in_use``) while a sandbox mounts it."""
        return Call(Request("DELETE", f"/volumes/{quote(volume_id, safe='')}"), nothing)
