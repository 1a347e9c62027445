"""Network policies: enforced on a runc server (gVisor has no NAT table), refused under gVisor."""

from __future__ import annotations

import pytest

from paddock import InvalidRequestError, NetworkPolicyOptions, NetworkRule

from .conftest import Server, User, sign_up
from .support import Flavor, result


async def test_a_sandbox_policy_is_read_updated_and_pruned(flavor: Flavor, runc_server: Server) -> None:
    user = sign_up(runc_server.url, f"egress-{flavor.value}")
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


async def test_gvisor_refuses_a_network_policy(flavor: Flavor, user: User) -> None:
    with pytest.raises(InvalidRequestError) as refused:
        await result(
            flavor.sandbox.create(
                network_policy=NetworkPolicyOptions("deny", [NetworkRule("allow", "example.com")]),
                **user.connection,
            )
        )
    assert refused.value.code == "network_policy_unsupported"
