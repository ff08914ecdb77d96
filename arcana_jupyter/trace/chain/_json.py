"""Two helpers every module of the chain uses: a value's size as compact JSON (what the encoder weighs
one form against another by) and a value shortened for an error message."""

from __future__ import annotations

import json
from typing import Any


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), default=str))
