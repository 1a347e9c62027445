"""What mypy infers for code that uses the SDK: checked by ``mypy --strict`` (test_packaging.py),
never run. Each API method is written once for both clients, so this pins both forms."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import assert_type

from paddock import (
    Account,
    AccountTemplate,
    AccountTemplateDetail,
    AsyncPaddock,
    AsyncPaymentOperations,
    AsyncSandbox,
    BuildLogPage,
    CodeResult,
    CommandEvent,
    CommandResult,
    DiagnosticText,
    FileInfo,
    Invoice,
    Paddock,
    PaymentOperations,
    Sandbox,
    RunStep,
    SandboxMetrics,
    Session,
    TemplateBuild,
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
    assert_type(client.templates.build("app", "./app", on_log=print), TemplateBuild)
    assert_type(client.templates.build_from_steps("app", "ubuntu", [RunStep("true")]), TemplateBuild)
    assert_type(client.templates.upload_files("./files"), str)
    assert_type(client.templates.list(), list[AccountTemplate])
    assert_type(client.templates.get("app"), AccountTemplateDetail)
    assert_type(client.templates.logs("app", "bld-1", from_=3), BuildLogPage)


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
    assert_type(await client.templates.build("app", "./app", timeout=600), TemplateBuild)
    assert_type(await client.templates.wait("app", "bld-1"), TemplateBuild)
    assert_type(await client.templates.cancel("app", "bld-1"), TemplateBuild)
    assert_type(await client.templates.delete("app"), None)
