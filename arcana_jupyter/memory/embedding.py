"""The optional semantic embedder: a Protocol, and how vectors are stored.

There is no embedder by default. Without one, recall is keyword-only (FTS5) and every result says
``mode="keyword"``; we never make up vectors. To add one, pass any object with
``embed(texts) -> list[list[float]]`` (and optionally a ``name`` attribute, which keys the stored
vectors so switching embedders never mixes vector spaces) as ``MemoryStore(embedder=...)``. A
local model must load offline from an installed package — no download at run time.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class Embedder(Protocol):
    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, all of the same dimension."""
        ...


def embedder_name(embedder: object) -> str:
    name = getattr(embedder, "name", None)
    return str(name) if name else type(embedder).__qualname__


def pack(vector: Sequence[float]) -> bytes:
    return array("f", vector).tobytes()


def unpack(blob: bytes) -> list[float]:
    values = array("f")
    values.frombytes(blob)
    return values.tolist()
