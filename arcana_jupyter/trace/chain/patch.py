"""A JSON value as a patch of an earlier one (``chain.patch``): :func:`make_patch` and :func:`apply_patch`.

What changes a little on every call (counts, utilisation, a note's numbers) is written as the keys
that changed: a value set or removed, a string's middle replaced, or a patch of a nested object or
list. A patch is kept only when it is smaller and gives the value back exactly; what the writer's
redaction treats by its key is never patched into."""

from __future__ import annotations

import json
import re
from typing import Any

from ..redact import ARG_CONTAINERS, NULLED_KEYS, redact_text
from ._json import JSONObject, _short, _size


def _plain_text(text: Any) -> bool:
    """Nothing in ``text`` is masked by the trace's redaction (its strictest mode, the secrets known):
    a line edit of it then resolves to what the writer's redaction of the whole text would."""
    return isinstance(text, str) and redact_text(text, content="redacted") == text


_WHOLE_KEYS = NULLED_KEYS | ARG_CONTAINERS
"""Keys whose values a patch never goes into (set whole): the writer's redaction treats what is under
them by their name, which a patch's own keys (list positions) would not carry."""


def make_patch(base: Any, new: Any) -> JSONObject | None:
    """``new`` as a patch of ``base`` (both dicts, or lists of one length): ``{key: p}`` for each key
    whose value changed, ``p`` one of ``[value]`` (set), ``[]`` (removed), ``[a, text, b]`` (a string:
    the base's first ``a`` characters, ``text``, its last ``b``) or a patch (of a dict or a list of the
    same length: keys ``"0"``, ``"1"`` ...). None when it is not smaller than ``new``, or does not
    give ``new`` back exactly (key order and number types included)."""
    patch = _patch(base, new)
    if patch is None or _size(patch) >= _size(new):
        return None
    try:
        if json.dumps(apply_patch(base, patch, "patch"), default=str) != json.dumps(new, default=str):
            return None
    except ValueError:
        return None
    return patch


def _patch(base: Any, new: Any) -> JSONObject | None:
    if isinstance(base, dict) and isinstance(new, dict):
        if [k for k in new if k in base] != [k for k in base if k in new]:
            return None  # the keys moved: a patch keeps the base's order
        out: JSONObject = {k: [] for k in base if k not in new}
        for k, v in new.items():
            if k not in base:
                out[k] = [v]
            elif not _same_json(base[k], v):
                out[k] = _value_patch(base[k], v, k)
        return out
    if isinstance(base, list) and isinstance(new, list) and len(base) == len(new):
        return {str(i): _value_patch(b, v, None) for i, (b, v) in enumerate(zip(base, new, strict=True))
                if not _same_json(b, v)}
    return None


def _same_json(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b and (type(a) not in (dict, list) or _size(a) == _size(b))


def _value_patch(base: Any, new: Any, key: str | None) -> Any:
    whole: Any = [new]
    if key in _WHOLE_KEYS:
        return whole
    best, size = whole, _size(whole)
    if isinstance(base, str) and isinstance(new, str) and _plain_text(base) and _plain_text(new) \
            and not _ASTRAL.search(base) and not _ASTRAL.search(new):  # the viewer counts UTF-16 units
        a = 0
        limit = min(len(base), len(new))
        while a < limit and base[a] == new[a]:
            a += 1
        b = 0
        while b < limit - a and base[-1 - b] == new[-1 - b]:
            b += 1
        edit = [a, new[a:len(new) - b], b]
        if _size(edit) < size:
            best, size = edit, _size(edit)
    elif (isinstance(base, dict) and isinstance(new, dict)) or (
            isinstance(base, list) and isinstance(new, list) and key is not None and not _identifier(key)):
        sub = _patch(base, new)
        if sub is not None and _size(sub) < size:
            best = sub
    return best


_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


def _identifier(key: str) -> bool:
    return key in ("id", "digest", "sha256") or key.endswith(("_id", "digest"))


def apply_patch(base: Any, patch: Any, where: str) -> Any:
    """``base`` with a :func:`make_patch` patch applied (a new value; ``base`` is not changed)."""
    if not isinstance(patch, dict):
        raise ValueError(f"{where}: {_short(patch)} is not a patch")
    if isinstance(base, dict):
        out = dict(base)
        for k, p in patch.items():
            value = _apply_value(base.get(k), k in base, p, f"{where}.{k}")
            if value is _DELETE:
                out.pop(k, None)
            else:
                out[k] = value
        return out
    if isinstance(base, list):
        items = list(base)
        for k, p in patch.items():
            if not (k.isdigit() and int(k) < len(items)):
                raise ValueError(f"{where}: a patch of a list of {len(items)} has the position {_short(k)}")
            value = _apply_value(items[int(k)], True, p, f"{where}[{k}]")
            if value is _DELETE:
                raise ValueError(f"{where}[{k}]: a patch removes an item of a list")
            items[int(k)] = value
        return items
    raise ValueError(f"{where}: a patch of {_short(base)}, which is neither an object nor a list")


_DELETE: Any = object()


def _apply_value(base: Any, present: bool, p: Any, where: str) -> Any:
    if isinstance(p, dict):
        if not present:
            raise ValueError(f"{where}: a patch of a value the previous decision does not have")
        return apply_patch(base, p, where)
    if not isinstance(p, list) or len(p) not in (0, 1, 3):
        raise ValueError(f"{where}: {_short(p)} is not [], [value], [a, text, b] or a patch")
    if not p:
        return _DELETE
    if len(p) == 1:
        return p[0]
    a, text, b = p
    if not (type(a) is int and type(b) is int and a >= 0 and b >= 0 and (text is None or isinstance(text, str))):
        raise ValueError(f"{where}: {_short(p)} is not [a, text, b]")
    if text is None or base is None:  # trace_content="none" nulls the text
        return None
    if not isinstance(base, str) or a + b > len(base):
        raise ValueError(f"{where}: [a, text, b] edits {_short(base)}, not a text of at least {a + b} characters")
    return base[:a] + text + base[len(base) - b:]
