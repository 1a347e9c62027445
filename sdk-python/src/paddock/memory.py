"""``client.memory``: text that outlives sandboxes, listed newest first and searched by relevance."""

from __future__ import annotations

import builtins
from typing import Any
from urllib.parse import quote

from ._resource import Resource, TransportT, endpoint
from ._transport import Call, Request, items, model, nothing
from . import _wire
from .models import MemoryEntry, MemoryList, MemorySearchHit


class Memory(Resource[TransportT]):
    """Works with a session, an unscoped key or a key scoped to ``memory``."""

    @endpoint
    def add(
        self, content: str, *, metadata: dict[str, Any] | None = None, tags: builtins.list[str] | None = None
    ) -> Call[MemoryEntry]:
        body: dict[str, object] = {
            "content": content,
            **({"metadata": metadata} if metadata is not None else {}),
            **({"tags": tags} if tags is not None else {}),
        }
        return Call(Request("POST", "/memory", json=body), model(MemoryEntry))

    @endpoint
    def list(
        self, *, tag: str | None = None, page: int | None = None, page_size: int | None = None
    ) -> Call[MemoryList]:
        """One page of entries, newest first; ``tag`` keeps those carrying it."""
        request = Request("GET", "/memory", _wire.query(tag=tag, page=page, page_size=page_size))
        return Call(request, model(MemoryList))

    @endpoint
    def search(
        self, query: str, *, tag: str | None = None, limit: int | None = None
    ) -> Call[builtins.list[MemorySearchHit]]:
        """Entries matching the words of ``query``, best first, each with a ``score`` and a
        ``snippet``."""
        request = Request("GET", "/memory/search", _wire.query(q=query, tag=tag, limit=limit))
        return Call(request, items(MemorySearchHit))

    @endpoint
    def delete(self, entry_id: str) -> Call[None]:
        return Call(Request("DELETE", f"/memory/{quote(entry_id, safe='')}"), nothing)
