"""What mypy infers for code that uses the SDK: checked by ``mypy --strict`` (test_packaging.py),
never run. Each API method is written once for both clients, so this pins both forms."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import assert_type

from paddock import (
    Account,
    AsyncPaddock,
    AsyncPaymentOperations,
    AsyncSandbox,
    CodeResult,
    CommandEvent,
    CommandResult,
    DiagnosticText,
    FileInfo,
    Invoice,
    Paddock,
    PaymentOperations,
    Sandbox,
    SandboxMetrics,
    Session,
    WriteResult,
)


def sync_forms(client: Paddock, sandbox: Sandbox) -> None:
    assert_type(client.me(), Account)
    assert_type(Paddock.login("a@example.com", "password").session, Session)
    assert_type(Paddock.login("a@example.com", "password").client, Paddock)
    assert_type(client.keys.delete("key-1"), None)
    assert_type(client.payments.invoices.finalize("in_1"), Invoice)
    assert_type(PaymentOperations.for_agent().invoices.finalize("in_1"), Invoice)
    assert_type(Sandbox.create(), Sandbox)
    assert_type(Sandbox.kill("sbx-1"), None)
    assert_type(sandbox.kill(), None)
    assert_type(sandbox.commands.run("ls"), CommandResult)
    assert_type(sandbox.commands.stream("ls"), Iterator[CommandEvent])
    assert_type(sandbox.files.read("/f"), str)
    assert_type(sandbox.files.read("/f", format="bytes"), bytes)
    assert_type(sandbox.files.read("/f", format="stream"), Iterator[bytes])
    assert_type(sandbox.files.write("/f", open("/f", "rb")), WriteResult)
    assert_type(sandbox.files.list("/"), list[FileInfo])
    assert_type(sandbox.run_code("1"), CodeResult)
    assert_type(sandbox.metrics(), SandboxMetrics)
    assert_type(sandbox.watch_metrics(), Iterator[SandboxMetrics])
    assert_type(sandbox.diagnostics.logs(scope="container"), DiagnosticText)


async def async_forms(client: AsyncPaddock, sandbox: AsyncSandbox) -> None:
    assert_type(await client.me(), Account)
    assert_type((await AsyncPaddock.login("a@example.com", "password")).client, AsyncPaddock)
    assert_type(await client.keys.delete("key-1"), None)
    assert_type(await client.payments.invoices.finalize("in_1"), Invoice)
    assert_type(await AsyncPaymentOperations.for_agent().invoices.finalize("in_1"), Invoice)
    assert_type(await AsyncSandbox.create(), AsyncSandbox)
    assert_type(await AsyncSandbox.kill("sbx-1"), None)
    assert_type(await sandbox.kill(), None)
    assert_type(await sandbox.commands.run("ls"), CommandResult)
    assert_type(sandbox.commands.stream("ls"), AsyncIterator[CommandEvent])
    assert_type(await sandbox.files.read("/f"), str)
    assert_type(await sandbox.files.read("/f", format="bytes"), bytes)
    assert_type(sandbox.files.read("/f", format="stream"), AsyncIterator[bytes])
    assert_type(await sandbox.files.write("/f", b"data"), WriteResult)
    assert_type(await sandbox.files.list("/"), list[FileInfo])
    assert_type(await sandbox.run_code("1"), CodeResult)
    assert_type(await sandbox.metrics(), SandboxMetrics)
    assert_type(sandbox.watch_metrics(), AsyncIterator[SandboxMetrics])
    assert_type(await sandbox.diagnostics.events(), DiagnosticText)
