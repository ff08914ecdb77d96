"""Compact per-turn decisions in traces: each decision stored against an earlier one (the façade).

A ``context_decision`` holds one MessageDecision per input message, so a long session would write
O(history) rows every turn — O(n²) bytes over a run. Two encodings, both read everywhere
(TraceReader, rebuild, the JupyterLab viewer):

- **Encoding 2, chained decisions** (what the runtime writes; :mod:`.chain`, docs/TRACE_FORMAT.md
  "Chained decisions"): each decision against the previous one of its agent, metadata that did not
  change referenced and metadata that changed a little patched or line-edited, keyframes that thin
  out as the history grows. Its modules: :mod:`.chain.columns` (a column as ops and back),
  :mod:`.chain.align`, :mod:`.chain.patch`, :mod:`.chain.metadata`, :mod:`.chain.encoder`
  (:class:`ChainEncoder`) and :mod:`.chain.resolver` (:class:`ChainResolver`).
- **Encoding 1, keyframes and deltas** (older traces; :mod:`.keyframes`: :class:`DeltaEncoder`,
  :func:`resolve_decision`, :class:`DecisionResolver`): every few turns a full list, otherwise a
  delta against the last full list.

This module only re-exports what the rest of the package and the tests use from both.
"""

from __future__ import annotations

from .chain.align import align_rows, aligned_base
from .chain.columns import NO_ROW, columns, decode_column, encode_column
from .chain.encoder import KEYFRAME_RATIO, MAX_CHAIN, ChainEncoder
from .chain.metadata import (
    CHAIN_VERSION,
    PATCH_KEYS,
    SAME_PATHS,
    encode_sections,
    is_chained,
    resolve_chain_metadata,
    resolve_sections,
)
from .chain.patch import apply_patch, make_patch
from .chain.resolver import FRAME_KEYS, ChainedRows, ChainResolver, decode_rows, rows_spec
from .keyframes import KEYFRAME_EVERY, DecisionResolver, DeltaEncoder, encode, resolve_decision

__all__ = [
    "CHAIN_VERSION", "FRAME_KEYS", "KEYFRAME_EVERY", "KEYFRAME_RATIO", "MAX_CHAIN", "NO_ROW", "PATCH_KEYS",
    "SAME_PATHS", "ChainEncoder", "ChainResolver", "ChainedRows", "DecisionResolver", "DeltaEncoder",
    "align_rows", "aligned_base", "apply_patch", "columns", "decode_column", "decode_rows", "encode",
    "encode_column", "encode_sections", "is_chained", "make_patch", "resolve_chain_metadata",
    "resolve_decision", "resolve_sections", "rows_spec",
]
