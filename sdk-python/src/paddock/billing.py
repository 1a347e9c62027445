"""``client.billing``: the platform's plans and Stripe Checkout."""

from __future__ import annotations

from ._resource import Resource, TransportT, endpoint
from ._transport import Call, Request, model
from .models import CheckoutSession, PlanId, PlanList


class Billing(Resource[TransportT]):
    """Needs a session or an unscoped key. The plan changes once Stripe reports the payment to
    the server, not when checkout starts."""

    @endpoint
    def plans(self) -> Call[PlanList]:
        """The plans on offer, the account's current plan and its subscription status."""
        return Call(Request("GET", "/billing/plans"), model(PlanList))

    @endpoint
    def checkout(self, plan: PlanId) -> Call[CheckoutSession]:
        """A Checkout Session for the plan; send the buyer to its ``url``."""
        return Call(Request("POST", "/billing/checkout", json={"plan": plan}), model(CheckoutSession))
