"""Billing (plans, checkout) and bring-your-own-key payments, against the local Stripe stand-in."""

from __future__ import annotations

import pytest

from paddock import (
    AGENT_KEY_VARIABLE,
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    PaymentLinkItem,
    PermissionError,
)

from .conftest import Server, User, sign_up
from .support import Flavor, result


@pytest.fixture
def merchant(flavor: Flavor, server: Server, request: pytest.FixtureRequest) -> User:
    """An account of its own per test: credentials and the agent key are per account."""
    return sign_up(server.url, f"{request.function.__name__}-{flavor.value}")


async def test_plans_and_checkout(flavor: Flavor, merchant: User) -> None:
    client = flavor.paddock(merchant.api_key, base_url=merchant.base_url)
    plans = await result(client.billing.plans())
    assert [plan.id for plan in plans.items] == ["free", "pro"]
    assert plans.items[1].price_cents == 2000 and plans.items[1].included_minutes is None
    assert plans.current.plan == "free" and plans.current.subscription_status is None
    assert plans.checkout_available

    session = await result(client.billing.checkout("pro"))
    assert session.id.startswith("cs_test_") and session.id in session.url
    with pytest.raises(InvalidRequestError) as free:
        await result(client.billing.checkout("free"))
    assert free.value.code == "plan_not_purchasable"
    await result(client.close())


async def test_the_owner_connects_stripe_and_runs_customers_invoices_and_links(
    flavor: Flavor, merchant: User, server: Server
) -> None:
    client = flavor.paddock(merchant.api_key, base_url=merchant.base_url)
    payments = client.payments
    with pytest.raises(NotFoundError) as absent:
        await result(payments.credentials.get())
    assert absent.value.code == "payment_credentials_not_found"
    with pytest.raises(ConflictError) as unconnected:
        await result(payments.customers.list())
    assert unconnected.value.code == "payments_not_connected"
    with pytest.raises(InvalidRequestError) as unknown:
        await result(payments.credentials.set(f"sk_test_{'0' * 24}"))
    assert unknown.value.code == "payment_credentials_invalid"

    stripe_key = server.stripe_keys[f"owner-{flavor.value}"]
    stored = await result(payments.credentials.set(stripe_key))
    assert stored.provider == "stripe" and not stored.livemode
    assert stored.masked_key.startswith("sk_test_") and stripe_key not in stored.masked_key
    assert await result(payments.credentials.get()) == stored

    customer = await result(
        payments.customers.create(email="client@example.com", name="Client Ltd", metadata={"ref": "42"})
    )
    assert customer.id.startswith("cus_") and customer.email == "client@example.com"
    assert (customer.name, customer.metadata) == ("Client Ltd", {"ref": "42"})

    draft = await result(
        payments.invoices.create(
            customer=customer.id,
            currency="usd",
            line_items=[
                {"description": "Consulting", "unit_amount": 15000, "quantity": 2},
                {"description": "Setup", "unit_amount": 5000},
            ],
            metadata={"order": "7"},
        )
    )
    assert (draft.status, draft.total, draft.amount_due) == ("draft", 35000, 35000)
    assert draft.hosted_invoice_url is None and draft.metadata == {"order": "7"}
    assert [(line.description, line.quantity, line.amount) for line in draft.line_items] == [
        ("Consulting", 2, 30000),
        ("Setup", 1, 5000),
    ]
    opened = await result(payments.invoices.finalize(draft.id))
    assert opened.status == "open" and opened.hosted_invoice_url and draft.id in opened.hosted_invoice_url
    listed = await result(payments.invoices.list(customer=customer.id, status="open"))
    assert [invoice.id for invoice in listed.items] == [draft.id]

    link = await result(
        payments.payment_links.create(currency="eur", line_items=[{"name": "E-book", "unit_amount": 900}])
    )
    assert link.active and link.currency == "eur" and link.url.startswith("https://buy.stripe.com/")
    assert [item.id for item in (await result(payments.payment_links.list(active=True))).items] == [link.id]

    second = await result(payments.customers.create(name="Second"))
    first_page = await result(payments.customers.list(limit=1))
    assert [item.id for item in first_page.items] == [second.id] and first_page.has_more
    rest = await result(payments.customers.list(limit=1, starting_after=second.id))
    assert [item.id for item in rest.items] == [customer.id] and not rest.has_more

    await result(payments.credentials.delete())
    with pytest.raises(NotFoundError):
        await result(payments.credentials.get())
    await result(client.close())


async def test_an_agent_key_acts_within_its_limits(
    flavor: Flavor, merchant: User, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = flavor.paddock(merchant.api_key, base_url=merchant.base_url)
    await result(client.payments.credentials.set(server.stripe_keys[f"agent-{flavor.value}"]))
    with pytest.raises(NotFoundError) as none_yet:
        await result(client.payments.agent_key.get())
    assert none_yet.value.code == "agent_key_not_found"

    issued = await result(
        client.payments.agent_key.create(
            allowed_operations=[
                "create_customer",
                "create_invoice",
                "finalize_invoice",
                "create_payment_link",
            ],
            currency="usd",
            max_amount=10_000,
            total_limit=15_000,
        )
    )
    assert issued.key.startswith(issued.prefix) and issued.amount_used == 0 and issued.total_limit == 15_000
    described = await result(client.payments.agent_key.get())
    assert described.prefix == issued.prefix and described.allowed_operations == issued.allowed_operations

    agent = flavor.payment_operations.for_agent(issued.key, base_url=merchant.base_url)
    customer = await result(agent.customers.create(email="buyer@example.com"))
    invoice = await result(
        agent.invoices.create(
            customer=customer.id,
            currency="usd",
            line_items=[{"description": "Work", "unit_amount": 2500, "quantity": 2}],
            finalize=True,
        )
    )
    assert (invoice.status, invoice.total) == ("open", 5000)
    sticker: PaymentLinkItem = {"name": "Sticker", "unit_amount": 500}
    link = await result(agent.payment_links.create(currency="usd", line_items=[sticker]))
    assert link.active

    with pytest.raises(PermissionError) as listing:
        await result(agent.customers.list())
    assert listing.value.code == "agent_operation_not_allowed"
    with pytest.raises(PermissionError) as too_much:
        await result(
            agent.payment_links.create(currency="usd", line_items=[{"name": "Big", "unit_amount": 10_001}])
        )
    assert too_much.value.code == "agent_amount_over_limit"
    assert (await result(client.payments.agent_key.get())).amount_used == 5500
    await result(agent.close())

    # Inside a sandbox an agent has the key in its environment.
    monkeypatch.setenv(AGENT_KEY_VARIABLE, issued.key)
    monkeypatch.setenv("PADDOCK_BASE_URL", merchant.base_url)
    from_environment = flavor.payment_operations.for_agent()
    created = await result(from_environment.customers.create(name="From the environment"))
    assert created.id.startswith("cus_")
    await result(from_environment.close())
    monkeypatch.delenv(AGENT_KEY_VARIABLE)
    with pytest.raises(ValueError, match=AGENT_KEY_VARIABLE):
        flavor.payment_operations.for_agent()

    await result(client.payments.agent_key.revoke())
    revoked = flavor.payment_operations.for_agent(issued.key, base_url=merchant.base_url)
    with pytest.raises(AuthenticationError):
        await result(revoked.customers.create(name="too late"))
    await result(revoked.close())
    await result(client.close())
