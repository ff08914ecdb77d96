"""What the decision encodings handle as JSON, named: the shapes (a row, a decision, its metadata, any
other object of the format) and two helpers every module uses — a value's size as compact JSON (what
the encoder weighs one form against another by) and a value shortened for an error message.

These modules are the trace's wire format: they take the dicts the writer dumps and the reader
parses, and give dicts back, so each shape below is a JSON edge (the typed models are
schema/events.py's; the encodings work on their dumps, column by column, in C where it pays)."""

from __future__ import annotations

import json
from typing import Any, TypeAlias

Row: TypeAlias = dict[str, Any]  # JSON edge: one MessageDecision dump (a row of a decision)
Decision: TypeAlias = dict[str, Any]  # JSON edge: a ContextDecision dump (metadata["decision"])
Metadata: TypeAlias = dict[str, Any]  # JSON edge: a context_decision's metadata, as written or resolved
JSONObject: TypeAlias = dict[str, Any]  # JSON edge: another object of the format (chain, chain.rows, a patch, a delta)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), default=str))
