"""Bring-your-own-key payments: customers, invoices and payment links on the account's own
Stripe account. The owner stores the key (``client.payments.credentials``), issues an agent key
with limits (``client.payments.agent_key``), and calls the operations itself or hands the agent
key to an agent (``PaymentOperations.for_agent``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from types import TracebackType
from urllib.parse import quote

from ._resource import Resource, TransportT, endpoint
from ._transport import AsyncTransport, Call, Connection, Request, SyncTransport, model, nothing
from ._wire import query
from .models import (
    AgentKey,
    AgentKeyWithSecret,
    Customer,
    CustomerList,
    Invoice,
    InvoiceItem,
    InvoiceList,
    InvoiceStatus,
    PaymentCredentials,
    PaymentLink,
    PaymentLinkItem,
    PaymentLinkList,
    PaymentOperation,
)

AGENT_KEY_VARIABLE = "PADDOCK_PAYMENTS_AGENT_KEY"
"""Environment variable an agent's payments client reads its key from."""


class Customers(Resource[TransportT]):
    @endpoint
    def create(
        self,
        *,
        email: str | None = None,
        name: str | None = None,
        description: str | None = None,
        metadata: dict[str, str] | None = None,
    ) -> Call[Customer]:
        fields = {"email": email, "name": name, "description": description, "metadata": metadata}
        body = {key: value for key, value in fields.items() if value is not None}
        return Call(Request("POST", "/payments/customers", json=body), model(Customer))

    @endpoint
    def list(
        self, *, limit: int | None = None, starting_after: str | None = None, email: str | None = None
    ) -> Call[CustomerList]:
        parameters = query(limit=limit, starting_after=starting_after, email=email)
        return Call(Request("GET", "/payments/customers", parameters), model(CustomerList))


class Invoices(Resource[TransportT]):
    @endpoint
    def create(
        self,
        *,
        customer: str,
        currency: str,
        line_items: Sequence[InvoiceItem],
        days_until_due: int | None = None,
        finalize: bool = False,
        metadata: dict[str, str] | None = None,
    ) -> Call[Invoice]:
        """A draft invoice, one line per item (amounts in the currency's smallest unit);
        ``finalize=True`` makes it payable at once."""
        body: dict[str, object] = {
            "customer": customer,
            "currency": currency,
            "lineItems": [_line("description", item["description"], item) for item in line_items],
            "finalize": finalize,
            **({"daysUntilDue": days_until_due} if days_until_due is not None else {}),
            **({"metadata": metadata} if metadata is not None else {}),
        }
        return Call(Request("POST", "/payments/invoices", json=body), model(Invoice))

    @endpoint
    def list(
        self,
        *,
        limit: int | None = None,
        starting_after: str | None = None,
        customer: str | None = None,
        status: InvoiceStatus | None = None,
    ) -> Call[InvoiceList]:
        parameters = query(limit=limit, starting_after=starting_after, customer=customer, status=status)
        return Call(Request("GET", "/payments/invoices", parameters), model(InvoiceList))

    @endpoint
    def finalize(self, invoice_id: str) -> Call[Invoice]:
        """Makes a draft invoice payable (``open``, with its hosted URL)."""
        path = f"/payments/invoices/{quote(invoice_id, safe='')}/finalize"
        return Call(Request("POST", path), model(Invoice))


class PaymentLinks(Resource[TransportT]):
    @endpoint
    def create(
        self, *, currency: str, line_items: Sequence[PaymentLinkItem], metadata: dict[str, str] | None = None
    ) -> Call[PaymentLink]:
        body: dict[str, object] = {
            "currency": currency,
            "lineItems": [_line("name", item["name"], item) for item in line_items],
            **({"metadata": metadata} if metadata is not None else {}),
        }
        return Call(Request("POST", "/payments/payment-links", json=body), model(PaymentLink))

    @endpoint
    def list(
        self, *, limit: int | None = None, starting_after: str | None = None, active: bool | None = None
    ) -> Call[PaymentLinkList]:
        parameters = query(limit=limit, starting_after=starting_after, active=active)
        return Call(Request("GET", "/payments/payment-links", parameters), model(PaymentLinkList))


def _line(label: str, text: str, item: InvoiceItem | PaymentLinkItem) -> dict[str, object]:
    line: dict[str, object] = {label: text, "unitAmount": item["unit_amount"]}
    if "quantity" in item:
        line["quantity"] = item["quantity"]
    return line


class Credentials(Resource[TransportT]):
    """The account's Stripe key: verified with Stripe and stored encrypted; only its masked form
    comes back."""

    @endpoint
    def set(self, secret_key: str) -> Call[PaymentCredentials]:
        request = Request("PUT", "/payments/credentials", json={"secretKey": secret_key})
        return Call(request, model(PaymentCredentials))

    @endpoint
    def get(self) -> Call[PaymentCredentials]:
        return Call(Request("GET", "/payments/credentials"), model(PaymentCredentials))

    @endpoint
    def delete(self) -> Call[None]:
        return Call(Request("DELETE", "/payments/credentials"), nothing)


class AgentKeys(Resource[TransportT]):
    """The account's one payments agent key and its limits."""

    @endpoint
    def create(
        self,
        *,
        allowed_operations: Sequence[PaymentOperation],
        currency: str,
        max_amount: int,
        total_limit: int | None = None,
    ) -> Call[AgentKeyWithSecret]:
        """Issues the agent key (shown once, in ``key``), replacing any earlier one. Amounts are in
        ``currency``'s smallest unit: ``max_amount`` per operation, ``total_limit`` over all."""
        body = {
            "allowedOperations": list(allowed_operations),
            "currency": currency,
            "maxAmount": max_amount,
            "totalLimit": total_limit,
        }
        return Call(Request("POST", "/payments/agent-key", json=body), model(AgentKeyWithSecret))

    @endpoint
    def get(self) -> Call[AgentKey]:
        return Call(Request("GET", "/payments/agent-key"), model(AgentKey))

    @endpoint
    def revoke(self) -> Call[None]:
        return Call(Request("DELETE", "/payments/agent-key"), nothing)


class PaymentOperationsBase(Resource[TransportT]):
    """Customers, invoices and payment links. Works with the owner's credentials or with the
    agent key (then within its limits: anything else is a ``PermissionError`` whose code starts
    with ``agent_``)."""

    def __init__(self, transport: TransportT) -> None:
        super().__init__(transport)
        self.customers = Customers(transport)
        self.invoices = Invoices(transport)
        self.payment_links = PaymentLinks(transport)


class Payments(PaymentOperationsBase[TransportT]):
    """``client.payments``: the operations, plus the key they use and the agent key."""

    def __init__(self, transport: TransportT) -> None:
        super().__init__(transport)
        self.credentials = Credentials(transport)
        self.agent_key = AgentKeys(transport)


def _agent_connection(api_key: str | None, base_url: str | None, request_timeout: float | None) -> Connection:
    key = api_key or os.environ.get(AGENT_KEY_VARIABLE)
    if not key:
        raise ValueError(f"no agent key: pass api_key or set {AGENT_KEY_VARIABLE}")
    return Connection.resolve(key, base_url, request_timeout)


class PaymentOperations(PaymentOperationsBase[SyncTransport]):
    """The payments client of an agent that holds only the agent key (inside a sandbox, say)."""

    @classmethod
    def for_agent(
        cls, api_key: str | None = None, *, base_url: str | None = None, request_timeout: float | None = None
    ) -> PaymentOperations:
        """``api_key`` defaults to PADDOCK_PAYMENTS_AGENT_KEY, ``base_url`` to PADDOCK_BASE_URL."""
        return cls(SyncTransport(_agent_connection(api_key, base_url, request_timeout)))

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> PaymentOperations:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


class AsyncPaymentOperations(PaymentOperationsBase[AsyncTransport]):
    """As ``PaymentOperations``, with asyncio."""

    @classmethod
    def for_agent(
        cls, api_key: str | None = None, *, base_url: str | None = None, request_timeout: float | None = None
    ) -> AsyncPaymentOperations:
        return cls(AsyncTransport(_agent_connection(api_key, base_url, request_timeout)))

    async def close(self) -> None:
        await self._transport.close()

    async def __aenter__(self) -> AsyncPaymentOperations:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.close()
