"""labextension/src/schema.gen.ts is what scripts/gen_ts_types.py writes from the models' JSON schema,
and labextension/src/types.ts takes those types from it instead of repeating them by hand."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from .conftest import EXT, ROOT

GENERATED = EXT / "src" / "schema.gen.ts"


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_ts_types", ROOT / "scripts" / "gen_ts_types.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = load_generator()


def test_generated_types_are_up_to_date() -> None:
    assert GENERATED.read_text(encoding="utf-8") == gen.generate(), (
        f"labextension/src/schema.gen.ts is out of date: run `{gen.COMMAND}`"
    )


def test_check_mode_says_what_to_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert gen.main(["--check"]) == 0
    assert capsys.readouterr().err == ""
    stale = tmp_path / "schema.gen.ts"
    stale.write_text("// stale\n", encoding="utf-8")
    monkeypatch.setattr(gen, "OUT", stale)
    assert gen.main(["--check"]) == 1
    assert "out of date: run `python scripts/gen_ts_types.py`" in capsys.readouterr().err
    assert gen.main([]) == 0
    assert stale.read_text(encoding="utf-8") == gen.generate()


def test_every_model_and_def_has_an_interface() -> None:
    text = GENERATED.read_text(encoding="utf-8")
    interfaces = set(re.findall(r"^export interface (\w+) \{", text, re.M))
    assert {m.__name__ for m in gen.MODELS} <= interfaces
    assert set(gen.schema()) == interfaces
    for name in gen.LITERALS:
        assert re.search(rf"^export type {name} = ", text, re.M), name


def test_the_generated_file_follows_a_model_change(monkeypatch: pytest.MonkeyPatch) -> None:
    """A field added to a model shows up in the output (what the up-to-date check relies on)."""
    from arcana_jupyter.schema.decisions import LayerReport

    class Extra(BaseModel):
        """A model made for this test."""

        layer: LayerReport
        note: str | None = None
        """What it says."""
        mode: Literal["a", "b"] = "a"
        tags: dict[str, list[int]] = {}
        anything: Any

    before = gen.generate()
    monkeypatch.setattr(gen, "MODELS", [*gen.MODELS, Extra])
    after = gen.generate()
    assert before != after
    block = after[after.index("export interface Extra {"):]
    block = block[: block.index("\n}")]
    assert "/** @pydantic Extra: A model made for this test. */" in after
    assert "  layer: LayerReport;" in block
    assert "  /** What it says. */\n  note?: string | null;" in block
    assert "  mode?: 'a' | 'b';" in block
    assert "  tags?: Record<string, number[]>;" in block
    assert "  anything: unknown;" in block


def test_an_unknown_schema_construct_fails_loudly() -> None:
    with pytest.raises(ValueError, match="no TypeScript mapping"):
        gen.ts_type({"type": "object", "properties": {"x": {"type": "string"}}})


def test_mapping_of_schema_nodes() -> None:
    assert gen.ts_type({"anyOf": [{"type": "null"}, {"$ref": "#/$defs/Pin"}]}) == "Pin | null"
    assert gen.ts_type({"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "null"}]}}) == (
        "(string | null)[]"
    )
    assert gen.ts_type({"enum": ["kept", "compressed", "dropped", "summarized"]}) == "Outcome"
    assert gen.ts_type({"enum": ["x", "it's"]}) == "'x' | 'it\\'s'"
    assert gen.ts_type({"type": "object", "additionalProperties": {"type": "integer"}}) == "Record<string, number>"
    assert gen.ts_type({"title": "Payload"}) == "unknown"


def test_types_ts_reexports_instead_of_repeating() -> None:
    """No hand-written copy of a generated type: types.ts re-exports it, or narrows a loosely typed
    (``dict[str, Any]``) field of it with ``Without<gen.X, ...>``, which fails to compile on a renamed field."""
    types_ts = (EXT / "src" / "types.ts").read_text(encoding="utf-8")
    generated = set(gen.schema()) | set(gen.LITERALS)
    for name in generated:
        own = re.search(rf"^export (?:interface|type) {name}\b(.*)$", types_ts, re.M)
        if own:
            assert own.group(1).startswith(f" extends Without<gen.{name}, "), f"types.ts repeats {name} by hand"
    assert "from './schema.gen';" in types_ts


def test_the_kernel_front_end_messages_are_generated_with_their_unions() -> None:
    """The comm's and the widget's messages (schema/frontend.py) are typed on the TypeScript side too."""
    from arcana_jupyter.schema import frontend

    text = GENERATED.read_text(encoding="utf-8")
    for name, members in gen.UNIONS.items():
        line = re.search(rf"^export type {name} = (.*);$", text, re.M)
        assert line, name
        assert line.group(1).split(" | ") == [m.__name__ for m in members]
        for m in members:
            assert re.search(rf"^export interface {m.__name__} \{{", text, re.M), m.__name__
    assert "export type LiveAction = 'unpin' | 'hydrate' | 'retract' | 'remember';" in text
    action = re.search(r"^export interface ActionRequest \{(.*?)^\}", text, re.M | re.S)
    assert action and "  action: LiveAction;" in action.group(1) and "  target: string;" in action.group(1)
    import typing

    from arcana_jupyter.jupyter.comm import ACTIONS

    assert typing.get_args(frontend.LiveAction) == ACTIONS  # the comm's own list of actions
