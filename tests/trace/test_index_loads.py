"""The index reads trace lines with pydantic-core's JSON parser (``trace.index.loads``), falling back to
``json.loads`` when it refuses one: a line reads as json reads it -- the same value, of the same types, or
json's error -- on whatever a trace holds (hostile lines included)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arcana_jupyter.trace.index import loads


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same types, NaN equal to NaN, -0.0 not equal to 0.0, keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return repr(a) == repr(b)
    return bool(a == b)


def _both(raw: bytes) -> None:
    try:
        want: Any = ("ok", json.loads(raw))
    except (ValueError, RecursionError) as exc:
        want = ("error", type(exc), str(exc))
    try:
        got: Any = ("ok", loads(raw))
    except (ValueError, RecursionError) as exc:
        got = ("error", type(exc), str(exc))
    assert want[0] == got[0], (raw[:200], want, got)
    if want[0] == "ok":
        assert _same(want[1], got[1]), (raw[:200], want, got)
    else:
        assert want == got, raw[:200]


EDGES = [
    b'{"a": NaN}', b'{"a": Infinity}', b'{"a": -Infinity}', b'{"a": +Infinity}', b'{"a": 1e999}', b'{"a": -0}',
    b'{"a": -0.0}', b'{"a": 123456789012345678901234567890}', b'{"a": 1.7976931348623157e308}', b'{"a": 5e-324}',
    b'{"a": 01}', b'{"a": "\\ud800"}', b'{"a": "\\udc00\\ud800"}', b'{"a": "\\ud83d\\ude00"}', b'{"a": "\t"}',
    b'{"a": "\x00"}', b'{"a": "\x7f"}', b'{"a": 1, "a": 2, "b": 3}', b'{"b": 1, "a": 2, "b": 3}', b'{"a": 1,}',
    b'[1,]', b'{"a": .5}', b'{"a": 5.}', b'{"a": 1e}', b'{"a": tru}', b'{"a": true} x', b'  {"a": 1}  ',
    b'\xef\xbb\xbf{"a": 1}', b'{"a": "\xff"}', b'{"a": "\xed\xa0\x80"}', b'{"\\u0000": 1}', b'{"a": 9007199254740993}',
    b'{"a": 12345678901234567890.5}', b'{"a": 1.0000000000000002}', b'{"a": "\xc3"}', b'{"a":\x0b1}', b'', b'"x"',
    b'\x00{\x00"\x00a\x00"\x00:\x001\x00}', b'{"a": 1}\n', b'[' * 5000 + b']' * 5000,
    b'{"a": "' + b'x' * 100_000 + b'"}',
]


def test_the_edges_read_as_json_reads_them() -> None:
    for raw in EDGES:
        _both(raw)


_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**40), max_value=10**40) | st.floats()
    | st.text(st.characters(codec=None, exclude_categories=())),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=30)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_values, st.booleans())
def test_any_json_value_reads_the_same(value: Any, ascii_only: bool) -> None:
    text = json.dumps({"v": value}, ensure_ascii=ascii_only)
    _both(text.encode("utf-8", "surrogatepass"))


@settings(max_examples=400, deadline=None)
@given(_values, st.integers(min_value=0, max_value=200), st.binary(min_size=1, max_size=4))
def test_a_damaged_line_reads_the_same(value: Any, at: int, junk: bytes) -> None:
    raw = json.dumps({"v": value}).encode("utf-8", "surrogatepass")
    at = min(at, len(raw))
    _both(raw[:at] + junk + raw[at:])
    _both(raw[:at])


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_any_bytes_read_the_same(raw: bytes) -> None:
    _both(raw)
