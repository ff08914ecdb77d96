"""Typed at the boundary (issue 37): event metadata is read by its keys only inside the codec.

A string-keyed read of event metadata is ``x["key"]``, ``x.get("key")``, ``.pop`` or ``.setdefault`` whose
``x`` is an event's metadata -- a name ``metadata``, ``meta``, ``md``, ``raw_meta``, ``decision_md`` or
``*_meta``, an attribute ``.metadata``, or the result of such a read (``meta.get("decision").get(...)``,
``(meta.get("decision") or {})[...]``, ``obj["metadata"][...]``). The codec (the modules that decode and
encode the trace's grammar, below) reads the JSON it decodes; everywhere else the readers hand out typed
records (``DecisionRecord.decision`` / ``.rows``, the event models, trace/decision_json.py's few edges),
and at most :data:`MOST_OUTSIDE` reads remain, each in a function that says it is a JSON edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "arcana_jupyter"

CODEC = ("trace/chain/", "trace/keyframes.py", "trace/decision_delta.py", "trace/decision_json.py",
         "trace/line_edits.py", "trace/prompt_sent.py", "trace/frames.py", "trace/index.py", "trace/limits.py",
         "schema/")
"""The trace's grammar, decoded and encoded: chained decisions and deltas, the frames' pass patched by the
chain's ops, prompt_sent records and line edits, a line parsed into its index entry and typed record, the
bounds a decision's decoding is held to (its recorded sections)."""

NOT_EVENT_METADATA = {
    "report/sources.py": "a notebook output's metadata (metadata.arcana: run id, agent, turn, trace path)",
    "report/execute.py": "the notebook's own metadata (kernelspec, metadata.arcana.run)",
    "report/notebook_html.py": "the notebook's own metadata (widget state)",
    "providers/local.py": "a GGUF file's metadata (its chat template)",
}

MOST_OUTSIDE = 5
NAMES = {"metadata", "meta", "md", "raw_meta", "decision_md"}


def _receiver(node: ast.AST) -> tuple[ast.AST, str] | None:
    """The value a string-keyed read reads from, and the key; None for anything else."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant) \
            and isinstance(node.slice.value, str):
        return node.value, node.slice.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("get", "pop", "setdefault") and node.args \
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.func.value, node.args[0].value
    return None


def _is_metadata(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in NAMES or node.id.endswith("_meta")
    if isinstance(node, ast.Attribute):
        return node.attr == "metadata" or node.attr in NAMES
    if isinstance(node, ast.BoolOp):
        return any(_is_metadata(v) for v in node.values)
    read = _receiver(node)
    return read is not None and (read[1] == "metadata" or _is_metadata(read[0]))


def metadata_reads(path: Path) -> list[tuple[int, str, str]]:
    """Every string-keyed read of event metadata in ``path``: line, the read, its enclosing function's source."""
    source = path.read_text()
    tree = ast.parse(source)
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    found = []
    for node in ast.walk(tree):
        read = _receiver(node)
        if read is None or not _is_metadata(read[0]):
            continue
        enclosing = [f for f in functions if f.lineno <= node.lineno <= (f.end_lineno or f.lineno)]
        around = ast.get_source_segment(source, min(enclosing, key=lambda f: (f.end_lineno or 0) - f.lineno)) \
            if enclosing else ""
        found.append((node.lineno, ast.unparse(node), around or ""))
    return found


def _reads_outside_the_codec() -> dict[str, list[tuple[int, str, str]]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(CODEC) or rel in NOT_EVENT_METADATA:
            continue
        reads = metadata_reads(path)
        if reads:
            out[rel] = reads
    return out


def test_event_metadata_is_read_by_key_only_in_the_codec() -> None:
    outside = _reads_outside_the_codec()
    listed = [f"{rel}:{line}: {text}" for rel, reads in outside.items() for line, text, _ in reads]
    assert len(listed) <= MOST_OUTSIDE, "string-keyed metadata reads outside the codec:\n" + "\n".join(listed)
    for rel, reads in outside.items():
        for line, text, around in reads:
            assert "JSON edge" in around, f"{rel}:{line}: {text} is not in a function that names its JSON edge"


def test_the_count_sees_the_reads_it_counts(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f(record, obj, meta):\n"
        "    a = record.metadata.get('decision')\n"
        "    b = (meta.get('decision') or {}).get('decisions')\n"
        "    c = obj['metadata']['decision']\n"
        "    d = obj.get('event_id')\n"  # the envelope, not the metadata
        "    e = record.rows\n"
        "    return a, b, c, d, e\n")
    assert sorted(text for _, text, _ in metadata_reads(sample)) == sorted([
        "record.metadata.get('decision')", "(meta.get('decision') or {}).get('decisions')", "meta.get('decision')",
        "obj['metadata']['decision']"])


def test_the_codec_and_the_exceptions_exist() -> None:
    for part in (*CODEC, *NOT_EVENT_METADATA):
        assert (PACKAGE / part).exists(), part
