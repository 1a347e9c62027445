"""Network policies, enforced by the egress sidecar on a gVisor server and on a runc server."""

from __future__ import annotations

import pytest

from paddock import InvalidRequestError, NetworkPolicyOptions, NetworkRule

from .conftest import Server, sign_up
from .support import Flavor, result


@pytest.mark.parametrize("server_fixture", ["server", "runc_server"])
async def test_a_sandbox_policy_is_read_updated_and_pruned(
    flavor: Flavor, server_fixture: str, request: pytest.FixtureRequest
) -> None:
    running: Server = request.getfixturevalue(server_fixture)
    user = sign_up(running.url, f"egress-{server_fixture}-{flavor.value}")
    policy = NetworkPolicyOptions("deny", [NetworkRule("allow", "allowed.test")])
    sandbox = await result(flavor.sandbox.create(network_policy=policy, **user.connection))
    try:
        enforced = await result(sandbox.network_policy.get())
        assert enforced.mode == "enforcing"
        assert enforced.policy == policy

        updated = await result(sandbox.network_policy.update([NetworkRule("allow", "*.example.org")]))
        assert [rule.target for rule in updated.policy.egress] == ["*.example.org", "allowed.test"]

        pruned = await result(sandbox.network_policy.remove(["*.example.org", "never-there.test"]))
        assert pruned.policy.egress == [NetworkRule("allow", "allowed.test")]

        with pytest.raises(InvalidRequestError):
            await result(sandbox.network_policy.update([NetworkRule("allow", "not a host name")]))
        assert await result(sandbox.network_policy.get()) == pruned
    finally:
        await result(sandbox.kill())
        await result(sandbox.close())
