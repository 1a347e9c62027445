"""The error tree: the status table, builtin bases, and failures that never reach the server."""

from __future__ import annotations

import builtins
import socket

import pytest

from paddock import (
    AuthenticationError,
    CommandExit,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    PaddockError,
    PermissionError,
    RateLimitError,
    ServerError,
    Stdout,
    TimeoutError,
    UsageLimitError,
)
from paddock.commands import _CommandDecoder
from paddock.errors import error_for

from .support import Flavor, result


@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [
        (400, InvalidRequestError, False),
        (401, AuthenticationError, False),
        (402, UsageLimitError, False),
        (403, PermissionError, False),
        (404, NotFoundError, False),
        (409, ConflictError, False),
        (413, InvalidRequestError, False),
        (429, RateLimitError, True),
        (500, ServerError, False),
        (502, ServerError, True),
        (503, ServerError, True),
    ],
)
def test_one_table_maps_a_status_to_a_class(status: int, kind: type[PaddockError], retryable: bool) -> None:
    error = error_for(status, "some_code", "what went wrong")
    assert type(error) is kind and isinstance(error, PaddockError)
    assert (error.status, error.code, error.retryable) == (status, "some_code", retryable)
    assert error.message == "what went wrong"
    assert str(error) == "what went wrong"


def test_permission_and_timeout_errors_are_also_the_builtins() -> None:
    assert isinstance(PermissionError("no", "forbidden", 403), builtins.PermissionError)
    assert isinstance(TimeoutError("slow", "timeout", 0, True), builtins.TimeoutError)
    with pytest.raises(builtins.PermissionError):
        raise error_for(403, "scope_forbidden", "no")


async def test_an_address_nothing_listens_on_is_a_retryable_connection_failure(flavor: Flavor) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    client = flavor.paddock("pk_any", base_url=f"http://127.0.0.1:{closed_port}")
    with pytest.raises(PaddockError) as failed:
        await result(client.me())
    assert (failed.value.code, failed.value.status, failed.value.retryable) == ("connection_failed", 0, True)
    await result(client.close())


def test_a_command_stream_that_stops_before_the_exit_is_an_error() -> None:
    """A connection cut between events: the decoder must not let it pass for a finished command."""
    decoder = _CommandDecoder()
    events = [*decoder.feed(b'event: init\ndata: {"type":"init","text":"1"}\n\n')]
    events += decoder.feed(b'event: stdout\ndata: {"type":"std')
    events += decoder.feed(b'out","text":"partial\\n"}\n\n')
    assert events == [Stdout("partial\n")]
    with pytest.raises(ServerError) as cut:
        list(decoder.end())
    assert cut.value.code == "stream_incomplete"


def test_a_failure_event_raises_the_error_it_names() -> None:
    decoder = _CommandDecoder()
    event = b'{"type":"error","code":"sandbox_oom_killed","detail":"out of memory","status":409}'
    with pytest.raises(ConflictError) as died:
        list(decoder.feed(b"event: error\r\ndata: " + event + b"\r\n\r\n"))
    assert (died.value.code, died.value.message) == ("sandbox_oom_killed", "out of memory")
    # Without a status, the one a buffered run answers for a sandbox that stopped answering.
    with pytest.raises(ServerError) as stopped:
        list(_CommandDecoder().feed(b'data: {"type":"error","code":"endpoint_unavailable"}\n\n'))
    assert stopped.value.status == 502


def test_execd_raw_json_framing_and_split_characters_decode() -> None:
    decoder = _CommandDecoder()
    text = '{"type":"stdout","text":"héllo"}\n\n{"type":"execution_complete","exit_code":0}\n\n'.encode()
    split = text.index("é".encode()) + 1  # inside the two bytes of é
    assert [*decoder.feed(text[:split]), *decoder.feed(text[split:]), *decoder.end()] == [
        Stdout("héllo"),
        CommandExit(0),
    ]

