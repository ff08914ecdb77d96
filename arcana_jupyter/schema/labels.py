"""What a decision row and an adaptive-context change say of themselves, in one place for Python.

The static HTML (``render/turn.py``), the CLI (``arcana trace replay`` / ``show --context``) and the
turn bundle use these; the JupyterLab inspector, the trace viewer and the widget use
``labextension/src/labels.ts``, which applies the same rules. ``labextension/test/row_labels.json``
is the one set of cases both are tested on (tests/render/test_row_labels.py, labels.test.ts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NOT_CHANGES = frozenset({"checkpoint", "search_turn_events", "retrieve_artifact"})
"""Engine actions that change no working-memory object: the per-turn checkpoint bookkeeping and
the two reads. A turn where only they happened changed nothing."""


def row_flag(d: Mapping[str, Any]) -> tuple[str, str] | None:
    """The one flag of a decision row, and what it means: ``[PIN]`` only for a pin, ``[KEEP]`` for a
    protected section (the checkpoint: never compressed, but not a pin), ``[REC]`` for a turn recalled
    as relevant, ``[RECENT]`` for one placed late because it is recent; ``None`` for every other row."""
    if d.get("pinned"):
        if (d.get("source") or "history") == "pin":
            return "[PIN]", "pinned: never compressed"
        return "[KEEP]", "protected section: never compressed (not a pin)"
    if d.get("recalled"):
        if d.get("reason") == "recency":
            return "[RECENT]", "recent: placed late in the prompt, next to the input"
        return "[REC]", "recalled: placed late in the prompt as relevant to this input"
    return None


def source_label(d: Mapping[str, Any]) -> str:
    """``source:section``, never a section's name twice."""
    source = str(d.get("source") or "history")
    section = d.get("section")
    return f"{source}:{section}" if section and section != source else source


def outcome_label(d: Mapping[str, Any]) -> str:
    """A dropped message whose content a section carries says where it went: ``dropped → checkpoint``."""
    section = d.get("section")
    if d.get("outcome") == "dropped" and section and (d.get("source") or "history") not in ("section", "pin"):
        return f"dropped → {str(section).replace('_', ' ')}"
    return str(d.get("outcome") or "")


def is_change(c: Mapping[str, Any]) -> bool:
    """Whether a ``state_change`` / ``context_action`` of a turn changed working memory (a tier move,
    an object made, updated, hydrated, retracted, focused, an artifact stored) — not the engine's
    checkpoint bookkeeping or a read."""
    if c.get("event_type") == "state_change":
        return True
    return c.get("event_type") == "context_action" and c.get("action") not in NOT_CHANGES


_BY = {"llm": " by the model", "user": " by you", "widget": " by you"}


def change_label(c: Mapping[str, Any]) -> str:
    """One line for a change: ``s_1 (constraint): soft → active · keyword:budget`` for a tier move,
    ``add_constraint s_1 (constraint) by you`` for an action (the kind once, never ``checkpoint
    checkpoint``), ``… refused: not_found`` for one the engine refused."""
    if c.get("event_type") == "state_change":
        cause = f" · {c['cause']}" if c.get("cause") else ""
        return (f"{c.get('object_id') or '?'} ({c.get('kind') or '?'}): {c.get('from_tier') or 'new'} → "
                f"{c.get('to_tier') or '—'}{cause}")
    action = str(c.get("action") or "action")
    kind = c.get("kind")
    parts = [action]
    if c.get("object_id"):
        parts.append(str(c["object_id"]))
    text = " ".join(parts) + (f" ({kind})" if kind and kind != action else "") + _BY.get(str(c.get("source")), "")
    result = c.get("result")
    if isinstance(result, Mapping) and result.get("ok") is False:
        text += f" — refused: {result.get('error') or 'failed'}"
    return text
