"""How the database's JSON columns are written and read: orjson, with the standard library's json for what
orjson refuses.

Every JSON column (SQLAlchemy's JSON type, through the engine's ``json_serializer`` and
``json_deserializer``, core.store.engine) and the items' COPY on PostgreSQL (core.store.store) go
through here, so a value reads back the same whichever path wrote it. orjson writes and reads floats
exactly (shortest round-trip form), as json does, and is about ten times faster: at 10^6 prepared items
the JSON of the items' ``data`` was most of a chunked preparation's serial finish (benchmarks/scale.md).
It refuses integers beyond 64 bits and anything but str keys (values are made ``json_safe`` before), and
reads no NaN literal; json takes over there, so older databases and odd values still work. It writes an
infinite float as null, as ``json_safe`` does NaN (json wrote "Infinity", which is not JSON and which
PostgreSQL's json type refused).
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps(value: Any) -> str:
    """``value`` as JSON text (UTF-8 kept as is, no spaces)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError: a 65-bit integer, a non-str key, a type it does not know
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def loads(text: str | bytes) -> Any:
    """The value of JSON ``text``."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # e.g. a NaN literal written by json.dumps into an older database
        return json.loads(text)
