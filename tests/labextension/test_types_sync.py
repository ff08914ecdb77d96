"""What the generated types (test_ts_schema_gen.py) don't cover: the hand-written parts of
labextension/src/types.ts still match Python, the runtime's bundle has the model's keys, and
labextension/package.json carries the package's version."""

from __future__ import annotations

import json
import re

import arcana_jupyter
from arcana_jupyter.schema import bundle

from .conftest import EXT

TYPES = (EXT / "src" / "types.ts").read_text(encoding="utf-8")


def ts_interface_fields(name: str) -> set[str]:
    m = re.search(r"export interface " + name + r" \{(.*?)\n\}", TYPES, re.S)
    assert m, f"interface {name} not found in types.ts"
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    # Top-level fields only: lines indented by exactly two spaces.
    return set(re.findall(r"^  ([A-Za-z_][A-Za-z0-9_]*)\??:", body, re.M))


def test_bundle_pins_match_the_pin_model() -> None:
    """The bundle's pins are ``Pin.summary()`` (no sha256), hand-written in types.ts."""
    from arcana_jupyter.schema.pins import Pin

    assert ts_interface_fields("Pin") == set(Pin.model_fields) - {"sha256"}


def test_sync_check_notices_a_difference() -> None:
    assert ts_interface_fields("Pin") != set(bundle.TurnBundle.model_fields)


def test_turn_bundle_keys_match_the_runtime() -> None:
    """The bundle the runtime assembles has the TurnBundle model's keys (the TS types are generated from it)."""
    from arcana_jupyter.runtime.bundle import bundle_from_events, compact_bundle

    made = bundle_from_events([], run_id="r_x", agent="main", turn=1, model="local", trace_path=None)
    # The notebook's copy adds ``compact``; the display adds ``session`` (and ``progress`` while running).
    displayed = {**compact_bundle(made), "session": {}, "progress": "…"}
    assert set(bundle.TurnBundle.model_fields) == set(displayed)
    from arcana_jupyter.jupyter.display import session_usage

    assert set(bundle.SessionUsage.model_fields) == set(session_usage(object()))
    assert set(bundle.TurnStep.model_fields) == {"step", "decision", "report", "budget", "request_digest",
                                                 "messages", "counting", "explain"}
    assert set(bundle.StepCounting.model_fields) == {"encoding", "ratio", "counted", "reported", "cached"}


def test_package_json_version_matches_python() -> None:
    pkg = json.loads((EXT / "package.json").read_text(encoding="utf-8"))
    assert pkg["version"] == arcana_jupyter.__version__
    assert pkg["name"] == "arcana-jupyter"
    assert pkg["jupyterlab"]["outputDir"] == "../arcana_jupyter/labextension"


def test_mime_type_matches_the_bundle() -> None:
    from arcana_jupyter.runtime import bundle

    assert f"TURN_MIME_TYPE = '{bundle.MIME_TYPE}'" in TYPES
