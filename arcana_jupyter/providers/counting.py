"""Which counter a recorded encoding name means: rebuild and replay count as the recording did.

A ``context_decision`` records the builder's ``encoding`` (``cl100k_base``, ``o200k_base``,
``gguf:bundled/SmolLM2-135M-Instruct.Q4_1.gguf`` or ``gguf:/path/model.gguf``); rebuilding that
turn must count with the same tokenizer, or budgets — and digests — differ.
"""

from __future__ import annotations

from ..tokens import TokenCounter


def counter_for_encoding(encoding: str | None, model: str | None = None) -> TokenCounter:
    """A counter for a recorded ``encoding`` name (``None``: tiktoken's choice for ``model``)."""
    if not encoding:
        return TokenCounter(model)
    if encoding.startswith("gguf:"):
        from .local import counter_for_gguf_encoding

        return counter_for_gguf_encoding(encoding)
    return TokenCounter(model, encoding=encoding)
