"""One way to declare a runtime tool (schema/tools.py): the schema generated from the arguments
model or given explicitly and checked against it, one validation, one error the model must fix."""

from __future__ import annotations

import json

import pytest
from pydantic import Field

from arcana_jupyter.runtime.tools import Tool, ToolRegistry
from arcana_jupyter.schema.tools import ModelRetry, ToolArguments, ToolDeclaration, ToolOutcome, arguments_schema


class Args(ToolArguments):
    query: str = Field(description="What to find.")
    limit: int = 5


def test_the_schema_is_generated_from_the_model() -> None:
    spec = ToolDeclaration("find", "Find things.", Args).spec
    assert spec.parameters == arguments_schema(Args)
    assert spec.parameters["required"] == ["query"] and spec.parameters["additionalProperties"] is False
    assert "title" not in spec.parameters["properties"]["query"]


def test_an_explicit_schema_must_match_the_model() -> None:
    schema = {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
              "required": ["query"]}
    assert ToolDeclaration("find", "", Args, schema).spec.parameters == schema
    with pytest.raises(TypeError, match="do not match"):
        ToolDeclaration("find", "", Args, {**schema, "required": []})
    with pytest.raises(TypeError, match="do not match"):
        ToolDeclaration("find", "", Args, {**schema, "properties": {"query": {"type": "string"}}})


def test_parse_validates_once_and_keeps_what_was_sent() -> None:
    declaration = ToolDeclaration("find", "", Args)
    parsed = declaration.parse('{"query": "x", "limit": "3"}')
    assert isinstance(parsed, Args) and parsed.limit == 3 and parsed.sent == {"query": "x", "limit": "3"}
    refused = declaration.parse('{"limit": 2, "other": 1}')
    assert isinstance(refused, ToolOutcome) and refused.error == "bad_arguments"
    assert json.loads(refused.content)["problems"] == [
        {"argument": "query", "problem": "missing required argument"},
        {"argument": "other", "problem": "unexpected argument"}]


def test_model_retry_is_the_structured_result() -> None:
    outcome = ModelRetry("no such id", code="not_found").outcome()
    assert outcome.ok is False and outcome.error == "not_found" and outcome.message == "no such id"
    assert outcome.content == '{"ok": false, "error": "not_found", "message": "no such id"}'
    own = ModelRetry("refused", code="x", data={"pinned": False, "reason": "x"}).outcome()
    assert json.loads(own.content) == {"pinned": False, "reason": "x"}


async def test_a_user_function_may_raise_model_retry() -> None:
    def lookup(name: str) -> str:
        """Look a name up."""
        raise ModelRetry(f"no {name!r}; try a full name", code="not_found")

    registry = ToolRegistry([lookup])
    outcome = await registry.execute("lookup", '{"name": "bo"}')
    assert outcome.error == "not_found" and json.loads(outcome.content)["message"] == "no 'bo'; try a full name"
    assert Tool(lookup).declaration.spec == Tool(lookup).spec
