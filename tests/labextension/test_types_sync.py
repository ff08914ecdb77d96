"""labextension/src/types.ts mirrors the Python models: same field names, same literal values,
and labextension/package.json carries the package's version."""

from __future__ import annotations

import json
import re
import typing

import pytest
from pydantic import BaseModel

import arcana_jupyter
from arcana_jupyter import messages
from arcana_jupyter.context import decisions
from arcana_jupyter.schema import bundle
from arcana_jupyter.trace.events import TraceEvent

from .conftest import EXT

TYPES = (EXT / "src" / "types.ts").read_text(encoding="utf-8")


def ts_interface_fields(name: str) -> set[str]:
    m = re.search(r"export interface " + name + r" \{(.*?)\n\}", TYPES, re.S)
    assert m, f"interface {name} not found in types.ts"
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    # Top-level fields only: lines indented by exactly two spaces.
    return set(re.findall(r"^  ([A-Za-z_][A-Za-z0-9_]*)\??:", body, re.M))


def ts_union(name: str) -> set[str]:
    m = re.search(r"export type " + name + r" = ([^;]+);", TYPES)
    assert m, f"type {name} not found in types.ts"
    return set(re.findall(r"'([^']*)'", m.group(1)))


@pytest.mark.parametrize(
    "model",
    [
        decisions.TokenBudget,
        decisions.MessageDecision,
        decisions.LayerReport,
        decisions.ContextReport,
        decisions.BudgetSnapshot,
        decisions.ContextDecision,
        TraceEvent,
        bundle.TurnBundle,
        bundle.TurnStep,
        bundle.StepCounting,
        bundle.SessionUsage,
        bundle.TurnError,
        bundle.BundleToolCall,
        bundle.PrimitiveCall,
    ],
    ids=lambda m: m.__name__,
)
def test_interface_fields_match_the_pydantic_model(model: type[BaseModel]) -> None:
    assert ts_interface_fields(model.__name__) == set(model.model_fields)


@pytest.mark.parametrize(
    ("ts_name", "literal"),
    [
        ("Outcome", decisions.Outcome),
        ("Fidelity", decisions.Fidelity),
        ("Layer", decisions.Layer),
        ("Source", decisions.Source),
        ("Placement", decisions.Placement),
        ("Role", messages.Role),
    ],
)
def test_literal_unions_match(ts_name: str, literal: object) -> None:
    assert ts_union(ts_name) == set(typing.get_args(literal))


def test_optional_fields_are_optional_in_typescript() -> None:
    """A field with a default in Python may be missing in older data: it must be optional in TS."""
    for model in (decisions.MessageDecision, decisions.ContextReport, decisions.ContextDecision, decisions.BudgetSnapshot):
        m = re.search(r"export interface " + model.__name__ + r" \{(.*?)\n\}", TYPES, re.S)
        assert m
        for name, field in model.model_fields.items():
            optional_in_ts = re.search(r"^  " + name + r"\?:", m.group(1), re.M) is not None
            assert optional_in_ts == (not field.is_required()), f"{model.__name__}.{name}"


def test_bundle_parts_match_their_models() -> None:
    """The bundle's pins are ``Pin.summary()`` (no sha256); its tiers hold ``StateObject`` dumps."""
    from arcana_jupyter.adaptive.state import StateObject
    from arcana_jupyter.schema.pins import Pin

    assert ts_interface_fields("Pin") == set(Pin.model_fields) - {"sha256"}
    assert ts_interface_fields("StateObject") == set(StateObject.model_fields)


def test_turn_bundle_keys_match_the_runtime() -> None:
    from arcana_jupyter.runtime.bundle import bundle_from_events, compact_bundle

    bundle = bundle_from_events([], run_id="r_x", agent="main", turn=1, model="local", trace_path=None)
    # The notebook's copy adds ``compact``; the display adds ``session`` (and ``progress`` while running).
    displayed = {**compact_bundle(bundle), "session": {}, "progress": "…"}
    assert ts_interface_fields("TurnBundle") == set(displayed)
    from arcana_jupyter.jupyter.display import session_usage

    assert ts_interface_fields("SessionUsage") == set(session_usage(object()))
    assert ts_interface_fields("TurnStep") == {"step", "decision", "report", "budget", "request_digest", "messages",
                                               "counting"}
    assert ts_interface_fields("StepCounting") == {"encoding", "ratio", "counted", "reported"}


def test_sync_check_notices_a_difference() -> None:
    assert ts_interface_fields("LayerReport") != set(decisions.MessageDecision.model_fields)


def test_package_json_version_matches_python() -> None:
    pkg = json.loads((EXT / "package.json").read_text(encoding="utf-8"))
    assert pkg["version"] == arcana_jupyter.__version__
    assert pkg["name"] == "arcana-jupyter"
    assert pkg["jupyterlab"]["outputDir"] == "../arcana_jupyter/labextension"


def test_mime_type_matches_the_bundle() -> None:
    from arcana_jupyter.runtime import bundle

    assert f"TURN_MIME_TYPE = '{bundle.MIME_TYPE}'" in TYPES
