"""Writing decisions as a chain (encoding 2): :class:`ChainEncoder`, one per agent, used by the runtime.

Each decision against the previous one of its agent — the rows aligned and their columns as ops, the
metadata copied, patched or line-edited — and a keyframe whenever the chain since the last one
outweighs it :data:`KEYFRAME_RATIO` times (or every :data:`MAX_CHAIN` decisions)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ._json import JSONObject, Metadata, Row
from .align import _unalign_changed, align_rows, aligned_base
from .columns import _encode_masked, columns, encode_column
from .metadata import CHAIN_VERSION, PATCH_KEYS, SAME_PATHS, _int_runs, _moved_runs, _shape_moved_only, encode_sections
from .patch import make_patch

MAX_CHAIN = 512
"""A keyframe at least every this many decisions of an agent (bounds a random read's walk back)."""
KEYFRAME_RATIO = 3
"""A keyframe once the deltas since the last one hold this many times its bytes: keyframes then cost at
most a third of what the deltas between them cost, at any length of the history (a keyframe of
string columns is a value table and indexes: about two thirds of what ops made it, so a random read
walks back about as many bytes as it did with a ratio of 2)."""


class ChainEncoder:
    """Per-agent state for writing decisions as a chain (encoding 2, used by the runtime)."""

    def __init__(self, max_chain: int = MAX_CHAIN) -> None:
        self.max_chain = max_chain
        self._prev_id: str | None = None
        self._prev_cols: dict[str, list[Any]] | None = None
        self._prev_meta: Metadata | None = None
        self._since = 0
        self._chain_bytes = 0
        self._keyframe_bytes = 0

    def pack(self, metadata: Metadata, rows: Sequence[Row]) -> Metadata:
        """The metadata to write for a decision whose ``metadata["decision"]`` has no rows (``rows`` are
        its MessageDecision dumps); call :meth:`written` with the event id once it is written."""
        cols = columns(rows)
        keys = list(cols)
        count = len(rows)
        prev = self._prev_cols
        keyframe = (prev is None or self._since >= self.max_chain
                    or (self._keyframe_bytes and self._chain_bytes >= KEYFRAME_RATIO * self._keyframe_bytes)
                    or list(prev) != keys)
        # a delta's keys are its previous decision's (other keys make a keyframe): not written again
        spec: JSONObject = {"count": count, "keys": keys} if keyframe or prev is None else {"count": count}
        if keyframe or prev is None:
            enc = {k: encode_column(v, None) for k, v in cols.items()}
            spec["align"] = []
        else:
            align = align_rows(cols, prev)
            # rows other than history messages whose tokens changed (the input, a section that grew) are
            # left unaligned: they then change in every column, so the columns that change where a
            # recalled message comes or goes (and there) can be written for those positions only
            # (measured over turns 930-970 of a 1,000-turn run: 4.6 -> 4.2 KB per decision; choosing the
            # smaller of both alignments per decision saved 1% more for twice the encoding)
            align = _unalign_changed(align, cols, prev) or align
            enc = _encode_masked(cols, {k: aligned_base(prev[k], align, count) for k in cols}, count)
            spec["align"] = align
        spec["columns"] = enc
        size = len(json.dumps(spec, separators=(",", ":"), default=str))  # what the row part weighs
        chain: JSONObject = {"v": CHAIN_VERSION, "prev": None if keyframe else self._prev_id}
        out = dict(metadata)
        inputs = out.get("inputs")
        if isinstance(inputs, dict):
            inputs = out["inputs"] = dict(inputs)
        same: list[str] = []
        if not keyframe and self._prev_meta is not None:
            for path in SAME_PATHS:
                head, _, tail = path.partition(".")
                holder, pholder = (out, self._prev_meta) if not tail else (inputs, self._prev_meta.get("inputs"))
                name = tail or head
                if isinstance(holder, dict) and isinstance(pholder, dict) and name in holder and name in pholder \
                        and holder[name] == pholder[name]:
                    same.append(path)
                    del holder[name]
                elif path == "shape" and isinstance(holder, dict) and isinstance(pholder, dict):
                    moved = _shape_moved_only(holder.get("shape"), pholder.get("shape"))
                    if moved is not None:  # the previous shape, but where the blocks went: chain.moved
                        same.append(path)
                        del holder[name]
                        chain["moved"] = moved
            if "inputs.sections" not in same and isinstance(inputs, dict) \
                    and isinstance(self._prev_meta.get("inputs"), dict):
                edited = encode_sections(inputs.get("sections"), self._prev_meta["inputs"].get("sections"))
                if edited is not None:
                    chain["sections"] = edited
                    del inputs["sections"]
        if not keyframe and self._prev_meta is not None:
            patches = {}
            for key in PATCH_KEYS:
                if key in out and key in self._prev_meta:
                    patch = make_patch(self._prev_meta[key], out[key])
                    if patch is not None:
                        patches[key] = patch
                        del out[key]
            if patches:
                chain["patch"] = patches
        if same:
            chain["same"] = same
        if isinstance(inputs, dict) and isinstance(inputs.get("overflow"), dict) and inputs["overflow"]:
            runs = {k: _int_runs(v) if isinstance(v, list) else None for k, v in inputs["overflow"].items()}
            if all(r is not None for r in runs.values()):
                chain["overflow"] = runs
                del inputs["overflow"]
        shape = out.get("shape")
        if "shape" not in same and isinstance(shape, dict) and isinstance(shape.get("moved"), dict):
            moved = _moved_runs(shape["moved"])
            if moved is not None:
                chain["moved"] = moved
                out["shape"] = {k: v for k, v in shape.items() if k != "moved"}
        chain["rows"] = spec
        out["chain"] = chain
        self._pending = (cols, metadata, keyframe, size)
        return out

    def written(self, event_id: str) -> None:
        cols, metadata, keyframe, size = self._pending
        self._prev_id, self._prev_cols, self._prev_meta = event_id, cols, metadata
        if keyframe:
            self._since, self._chain_bytes, self._keyframe_bytes = 0, 0, max(size, 1)
        else:
            self._since += 1
            self._chain_bytes += size
