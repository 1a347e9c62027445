"""``sandbox.network_policy``: the live outbound policy of a sandbox created with one. Changes
apply to new connections as soon as the call returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from ._resource import Resource, TransportT, endpoint
from ._transport import Call, Request, model
from ._wire import query
from .models import EnforcedNetworkPolicy, NetworkRule


class NetworkPolicy(Resource[TransportT]):
    def __init__(self, transport: TransportT, sandbox_id: str) -> None:
        super().__init__(transport)
        self._path = f"/sandboxes/{sandbox_id}/network-policy"

    @endpoint
    def get(self) -> Call[EnforcedNetworkPolicy]:
        """The enforced policy and its mode (``allow_all``, ``deny_all``, ``enforcing``)."""
        return Call(Request("GET", self._path), model(EnforcedNetworkPolicy))

    @endpoint
    def update(self, rules: Sequence[NetworkRule]) -> Call[EnforcedNetworkPolicy]:
        """Puts ``rules`` ahead of the existing ones; a rule for a target already present replaces it."""
        body = {"egress": [asdict(rule) for rule in rules]}
        return Call(Request("PATCH", self._path, json=body), model(EnforcedNetworkPolicy))

    @endpoint
    def remove(self, targets: Sequence[str]) -> Call[EnforcedNetworkPolicy]:
        """Removes the rules for these targets (unknown targets are ignored)."""
        return Call(Request("DELETE", self._path, query(target=list(targets))), model(EnforcedNetworkPolicy))
