"""Context tests run with lexical relevance unless a test asks for an embedder: the embedding model
is a core dependency, and ``embedder="auto"`` (the builder's default) would pick it up."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _lexical_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARCANA_EMBEDDINGS", "off")
