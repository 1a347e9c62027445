"""``client.usage``: sandbox minutes of the current calendar month (UTC)."""

from __future__ import annotations

from ._resource import Resource, TransportT, endpoint
from ._transport import Call, Request, model
from ._wire import query
from .models import SandboxUsageList, UsageSummary


class Usage(Resource[TransportT]):
    """Needs a session or an unscoped key; a scoped key is refused (``scope_forbidden``)."""

    @endpoint
    def get(self) -> Call[UsageSummary]:
        """Minutes used, the plan, its included minutes and what is left."""
        return Call(Request("GET", "/usage"), model(UsageSummary))

    @endpoint
    def sandboxes(self, *, page: int | None = None, page_size: int | None = None) -> Call[SandboxUsageList]:
        """One page of minutes per sandbox, newest first; deleted sandboxes stay listed."""
        request = Request("GET", "/usage/sandboxes", query(page=page, page_size=page_size))
        return Call(request, model(SandboxUsageList))
