"""``sandbox.diagnostics``: what the server knows of a sandbox, as text."""

from __future__ import annotations

from ._resource import Resource, TransportT, endpoint
from ._transport import Call, Request, model
from ._wire import query
from .models import DiagnosticText


class Diagnostics(Resource[TransportT]):
    def __init__(self, transport: TransportT, sandbox_id: str) -> None:
        super().__init__(transport)
        self._path = f"/sandboxes/{sandbox_id}/diagnostics"

    @endpoint
    def logs(self, *, scope: str | None = None) -> Call[DiagnosticText]:
        """The sandbox's output (``scope="container"``), its lifecycle record (``"lifecycle"``) or
        both (``"all"``, the default)."""
        return Call(Request("GET", f"{self._path}/logs", query(scope=scope)), model(DiagnosticText))

    @endpoint
    def events(self, *, scope: str | None = None) -> Call[DiagnosticText]:
        """The sandbox's lifecycle events (``scope="lifecycle"``), its container's state in the
        engine (``"runtime"``) or both (``"all"``, the default)."""
        return Call(Request("GET", f"{self._path}/events", query(scope=scope)), model(DiagnosticText))
