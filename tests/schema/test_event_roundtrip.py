"""Every event model survives JSON: model -> JSON -> the discriminated union's TypeAdapter -> equal."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from arcana_jupyter.schema import EVENT_ADAPTER
from arcana_jupyter.schema.events import EVENT_MODELS, EVENT_TYPES, METADATA_MODELS

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


def strategy_for(annotation: Any) -> st.SearchStrategy[Any]:
    """Values of a field's annotation (the few kinds the schema uses)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is Any:
        return JSON_VALUES
    if origin in (Union, types.UnionType):
        return st.one_of(*(strategy_for(a) for a in args))
    if origin is Literal:
        return st.sampled_from(args)
    if origin is list:
        return st.lists(strategy_for(args[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(TEXT, strategy_for(args[1]), max_size=3)
    if annotation is type(None):
        return st.none()
    if annotation is bool:
        return st.booleans()
    if annotation is int:
        return st.integers(-10**9, 10**9)
    if annotation is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    if annotation is str:
        return TEXT
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return model_values(annotation)
    raise AssertionError(f"no strategy for {annotation!r}")


def model_values(model: type[BaseModel]) -> st.SearchStrategy[dict[str, Any]]:
    """A dict for ``model``: every field by its wire name (alias), each present or left out when it has a default."""
    fields: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for name, info in model.model_fields.items():
        key = info.alias or name
        (optional if not info.is_required() else fields)[key] = strategy_for(info.annotation)
    return st.fixed_dictionaries(fields, optional=optional)


def events() -> st.SearchStrategy[dict[str, Any]]:
    return st.sampled_from(EVENT_TYPES).flatmap(lambda et: st.fixed_dictionaries({
        "event_type": st.just(et),
        "event_id": TEXT,
        "run_id": TEXT,
        "agent": TEXT,
        "turn": st.none() | st.integers(0, 10**6),
        "ts": TEXT,
        "parent_id": st.none() | TEXT,
        "metadata": model_values(METADATA_MODELS[et]),
    }))


def test_every_event_type_has_a_model() -> None:
    assert set(METADATA_MODELS) == set(EVENT_TYPES) == set(EVENT_MODELS)


@settings(max_examples=300, deadline=None)
@given(events())
def test_every_event_model_round_trips_through_json(raw: dict[str, Any]) -> None:
    event = EVENT_ADAPTER.validate_python(raw, strict=True)
    assert type(event) is EVENT_MODELS[raw["event_type"]]
    wire = EVENT_ADAPTER.dump_json(event, by_alias=True)
    again = EVENT_ADAPTER.validate_json(wire, strict=True)
    assert again == event
    assert EVENT_ADAPTER.dump_python(again, by_alias=True) == EVENT_ADAPTER.dump_python(event, by_alias=True)


def test_dotted_otel_keys_are_aliases() -> None:
    event = EVENT_ADAPTER.validate_python({"event_type": "llm_call", "event_id": "e_1", "metadata": {
        "gen_ai.usage.input_tokens": 12, "gen_ai.response.finish_reasons": ["stop"], "future_key": 1}})
    assert event.metadata.input_tokens == 12 and event.metadata.finish_reasons == ["stop"]  # type: ignore[union-attr]
    dumped = event.metadata.model_dump(by_alias=True, exclude_unset=True)
    assert dumped == {"gen_ai.usage.input_tokens": 12, "gen_ai.response.finish_reasons": ["stop"], "future_key": 1}


@settings(max_examples=60, deadline=None)
@given(event_type=st.sampled_from(EVENT_TYPES), key=TEXT, value=JSON_VALUES)
def test_read_event_is_the_adapter_with_the_readers_tolerance(event_type: str, key: str, value: Any) -> None:
    """``read_event`` gives what EVENT_ADAPTER gives when the line fits, and otherwise the typed event
    whose metadata is ``Record.read`` of it (a mistyped known key falls back to its default): never raises."""
    from pydantic import ValidationError

    from arcana_jupyter.schema.events import read_event

    model = METADATA_MODELS[event_type]
    name = next(iter(model.model_fields), key)
    alias = model.model_fields[name].alias or name if name in model.model_fields else key
    line = {"event_type": event_type, "event_id": "e_1", "run_id": "r_1", "metadata": {alias: value, key: value}}
    typed = read_event(line)
    assert type(typed) is EVENT_MODELS[event_type]
    try:
        expected = EVENT_ADAPTER.validate_python(line, strict=True)
    except ValidationError:
        assert typed.metadata == model.read(line["metadata"])  # type: ignore[union-attr]
    else:
        assert typed == expected
    assert read_event({**line, "event_type": "from_a_newer_writer"}) is None
