"""The wire format: JSON bodies into dataclasses, and the server-sent events of streaming calls."""

from __future__ import annotations

import codecs
import dataclasses
import json
import re
import types
import typing
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, TypeVar

from .errors import PaddockError

T = TypeVar("T")


def camel(name: str) -> str:
    """``expires_at`` → ``expiresAt``: Python field names to the control plane's JSON keys."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_hints: dict[type, dict[str, Any]] = {}
"""Each dataclass's resolved field types, looked up once."""


def decode(kind: Any, value: Any) -> Any:
    """Builds ``kind`` (a dataclass, ``list[X]``, ``dict[str, X]``, ``X | None`` or a plain
    type) from JSON. Dataclass fields are found under their snake_case or camelCase key; keys
    the SDK does not know are ignored, so newer servers keep working."""
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        return _decode_dataclass(kind, value)
    origin = typing.get_origin(kind)
    arguments = typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        inner = [argument for argument in arguments if argument is not type(None)]
        return decode(inner[0], value) if len(inner) == 1 else value
    if origin is list:
        return [decode(arguments[0], item) for item in value]
    if origin is dict:
        return {key: decode(arguments[1], item) for key, item in value.items()}
    return value


def _decode_dataclass(cls: type[T], value: Any) -> T:
    if not isinstance(value, Mapping):
        raise PaddockError(f"expected a JSON object for {cls.__name__}", "unexpected_response", 0)
    hints = _hints.get(cls) or _hints.setdefault(cls, typing.get_type_hints(cls))
    arguments: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        for key in (field.name, camel(field.name)):
            if key in value:
                arguments[field.name] = decode(hints[field.name], value[key])
                break
        else:
            if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                raise PaddockError(
                    f"the server's answer has no {camel(field.name)} for {cls.__name__}",
                    "unexpected_response",
                    0,
                )
    return cls(**arguments)


def parse(cls: type[T], body: bytes) -> T:
    return typing.cast(T, decode(cls, json.loads(body)))


def query(**parameters: object) -> list[tuple[str, str]]:
    """Query parameters under their camelCase names; ``None`` is left out, lists repeat the name."""
    pairs: list[tuple[str, str]] = []
    for name, value in parameters.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        for item in values:
            if item is None:
                continue
            text = str(item).lower() if isinstance(item, bool) else str(item)
            pairs.append((camel(name), text))
    return pairs


def timestamp(value: datetime | str) -> str:
    """RFC 3339 in UTC, as the wire carries times; naive datetimes are taken to be UTC."""
    if isinstance(value, str):
        return value
    moment = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


_BOUNDARY = re.compile(r"\r?\n\r?\n")
_FIELD = re.compile(r"^(data|event|id|retry):\s?(.*)$")


class SseParser:
    """Incremental parser of server-sent events: feed bytes, get complete events back. Reads the
    standard ``data: <json>`` framing and execd's raw-JSON blocks, as packages/common/src/sse.ts."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._buffer = ""

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        self._buffer += self._decoder.decode(chunk)
        events: list[dict[str, Any]] = []
        while boundary := _BOUNDARY.search(self._buffer):
            block, self._buffer = self._buffer[: boundary.start()], self._buffer[boundary.end() :]
            events.extend(_parse_block(block))
        return events

    def end(self) -> list[dict[str, Any]]:
        rest, self._buffer = self._buffer + self._decoder.decode(b"", final=True), ""
        return _parse_block(rest)


def _parse_block(block: str) -> list[dict[str, Any]]:
    data: list[str] = []
    name: str | None = None
    saw_field = False
    for line in block.splitlines():
        if not line or line.startswith(":"):
            continue
        field = _FIELD.match(line)
        if field:
            saw_field = True
            if field[1] == "data":
                data.append(field[2])
            elif field[1] == "event":
                name = field[2]
        elif not saw_field:
            data.append(line)  # execd's raw-JSON framing
    if not data:
        return []
    text = "\n".join(data)
    try:
        parsed = json.loads(text)
    except ValueError:
        return [{"type": name or "message", "data": text}]
    if isinstance(parsed, dict):
        kind = parsed.get("type")
        return [{**parsed, "type": kind if isinstance(kind, str) else name or "message"}]
    return [{"type": name or "message", "data": parsed}]

