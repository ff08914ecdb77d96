"""Typed options of the magics: argparse (IPython's magic_arguments) parses, pydantic validates."""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..runtime.config import PRIMITIVES

Strategy = Literal["auto", "passthrough", "tail_preserve", "aggressive_truncate", "llm_summarize"]


class ChatOptions(BaseModel):
    """``%arcana_chat`` after parsing; ``None`` means "use the ``ArcanaMagics`` default"."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    window: int | None = Field(default=None, gt=0)
    reserve: int | None = Field(default=None, ge=0)
    strategy: Strategy | None = None
    primitives: list[str] | None = None
    snapshots: bool | None = None
    engine: bool | None = None
    memory: bool | None = None
    tools: bool | None = None
    resume: str | None = None
    name: str = Field(default="main", pattern=r"^[A-Za-z0-9_.-]{1,64}$")

    @field_validator("primitives", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [p.strip() for p in value.split(",") if p.strip()]
        return value

    @field_validator("primitives")
    @classmethod
    def _known(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return value
        unknown = [p for p in value if p not in PRIMITIVES]
        if unknown:
            raise ValueError(f"unknown primitive(s) {', '.join(unknown)}; choose from {', '.join(PRIMITIVES)}")
        return value


class TurnOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session: str | None = None


class ReplayOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str | None = None
    turn: int | None = Field(default=None, ge=1)
    session: str | None = None


class ExportOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    output: str | None = None
    verify: bool = False
    embed: bool = False


class _Namespace(dict[str, Any]):
    """The notebook namespace for ``str.format``: a missing name is a clear error."""

    def __missing__(self, key: str) -> Any:
        raise KeyError(key)


def interpolate(body: str, user_ns: Mapping[str, Any]) -> str:
    """Fill ``{name}`` (and ``{name.attr}``, ``{name[0]}``, ``{x:.2f}``) from the notebook's variables.

    ``{{`` and ``}}`` stay literal braces. Raises ``KeyError`` for an unknown name and
    ``ValueError`` for a malformed field, with a message that says how to write a literal brace.
    """
    formatter = string.Formatter()
    try:
        return formatter.vformat(body, (), _Namespace(user_ns))
    except KeyError as exc:
        raise KeyError(
            f"{{{exc.args[0]}}} names no variable in the notebook; define it, or write {{{{ and }}}} for literal braces"
        ) from None
    except (IndexError, ValueError, AttributeError) as exc:
        raise ValueError(f"cannot fill the cell's {{...}} fields: {exc}; write {{{{ and }}}} for literal braces") from None
