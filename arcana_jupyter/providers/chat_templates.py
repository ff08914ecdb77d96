"""What a model's chat template needs, found out by asking the template itself — out of process.

:func:`detect_shape` probes a real Jinja chat template (:mod:`.template_probe`: a few small probe
conversations rendered as vLLM and llama.cpp render them, each message's text searched for in the
rendering) and turns the answers into a :class:`~.shaping.PromptShape`, cached per template hash.

A template comes from a model hub or a server, and it is code: two nested ``range(100000)`` loops,
``lipsum(n=10**8)``, ``7 ** 1000000000`` (one C call holding the GIL). So the probe runs in a process of
its own (``python -m arcana_jupyter.providers.template_probe``), bounded in memory and CPU time by
itself and in wall-clock time by :data:`PROBE_SECONDS` here (docs/SECURITY.md). Past a bound — and for
a template that is not text (a lone surrogate), too long (:data:`MAX_TEMPLATE_CHARS`) or renders no
conversation at all — the shape is the ``fallback`` (the model family's), and its ``source`` says why in
one line.

Where no template can be read (a hosted API, Ollama's Go templates), :func:`shape_for_model`
maps the model's name to its family's shape; anything unknown gets the portable shape.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from dataclasses import replace
from typing import NamedTuple

from .shaping import SHAPES, PromptShape
from .template_probe import TemplateRefused, render_template

__all__ = ["PROBE_SECONDS", "TemplateRefused", "detect_shape", "probe_template", "render_template",
           "shape_for_model", "template_hash"]


def _seconds_setting() -> float:
    raw = os.environ.get("ARCANA_TEMPLATE_PROBE_SECONDS", "").strip()
    try:
        return max(0.5, float(raw)) if raw else 10.0
    except ValueError:
        return 10.0


PROBE_SECONDS = _seconds_setting()
"""Wall-clock bound of one template probe, process start included (``ARCANA_TEMPLATE_PROBE_SECONDS``,
read at import; the probe itself takes ~0.1 s of CPU for a real template, starting Python the rest)."""
MAX_TEMPLATE_CHARS = 1 << 20
"""A longer chat template is not probed (real ones are a few KB)."""


def template_hash(template: str) -> str:
    return hashlib.sha256(template.encode("utf-8", errors="surrogatepass")).hexdigest()[:12]


class Probe(NamedTuple):
    """What probing one template found: its rules, or why there are none."""

    rules: dict[str, object] | None
    problem: str | None = None


_probes: dict[str, Probe] = {}
_probes_lock = threading.Lock()


def probe_template(template: str) -> Probe:
    """The rules ``template`` needs, probed out of process within :data:`PROBE_SECONDS` (cached per hash)."""
    key = template_hash(template)
    with _probes_lock:
        found = _probes.get(key)
    if found is None:
        found = _probe(template)
        with _probes_lock:
            _probes[key] = found
            while len(_probes) > 64:
                _probes.pop(next(iter(_probes)))
    return found


def _probe(template: str) -> Probe:
    if len(template) > MAX_TEMPLATE_CHARS:
        return Probe(None, f"the chat template is {len(template):,} characters long (more than "
                           f"{MAX_TEMPLATE_CHARS:,}): not probed")
    try:
        template.encode("utf-8")
    except UnicodeEncodeError:
        return Probe(None, "the chat template is not valid Unicode text (a lone surrogate): not probed")
    try:
        done = subprocess.run([sys.executable, "-P", "-m", "arcana_jupyter.providers.template_probe"],
                              input=json.dumps({"template": template}).encode(), capture_output=True,
                              timeout=PROBE_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        return Probe(None, f"the chat template probe did not finish within {PROBE_SECONDS:g} s")
    except OSError as exc:
        return Probe(None, f"the chat template probe could not start ({exc})")
    try:
        answer = json.loads(done.stdout[:65536] or b"null")
    except ValueError:
        answer = None
    if isinstance(answer, dict) and isinstance(answer.get("rules"), dict):
        return Probe(answer["rules"])
    if isinstance(answer, dict) and isinstance(answer.get("error"), str):
        return Probe(None, f"the chat template could not be probed: {answer['error']}")
    if done.returncode < 0:  # killed: SIGXCPU (the CPU bound), SIGKILL (out of memory) ...
        return Probe(None, f"the chat template probe was stopped by signal {-done.returncode} (its time or "
                           "memory bound)")
    return Probe(None, f"the chat template probe failed (exit {done.returncode})")


def detect_shape(template: str, fallback: PromptShape | None = None) -> PromptShape:
    """The shape ``template`` needs, found by probing it (cached per template). Past the probe's bounds
    (or for a template that cannot be probed), ``fallback`` (default: the portable shape) with a
    ``source`` that says why."""
    found = probe_template(template)
    if found.rules is not None:
        known = set(PromptShape.__dataclass_fields__) - {"source"}
        rules = {k: v for k, v in found.rules.items() if k in known}
        return PromptShape(**rules, source=f"template {template_hash(template)}")  # type: ignore[arg-type]
    base = fallback if fallback is not None else SHAPES["portable"].with_source("default")
    return replace(base, source=f"{base.source} (template not probed)", problem=found.problem)


_FAMILIES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("gemma-3", "gemma3"), "text_tools", "gemma-3"),
    (("gemma",), "strict", "gemma"),
    (("mistral-7b-instruct-v0.1", "mistral-7b-instruct-v0.2", "mixtral-8x7b-instruct-v0.1"), "strict", "mistral-7b"),
    (("mistral", "mixtral", "ministral", "magistral", "devstral", "codestral", "pixtral"), "mistral", "mistral"),
    (("llama-3", "llama3", "llama-4", "llama4"), "llama3", "llama-3"),
    (("phi-4", "phi4", "phi-3", "phi3"), "portable", "phi"),
    (("deepseek-r1", "r1-distill"), "portable", "deepseek-r1"),
    (("qwen",), "portable", "qwen"),
)
"""Model-name fragments -> shape, first match wins (the name is compared lower-case)."""


def shape_for_model(model: str | None) -> PromptShape:
    """The shape for a model known by name only: its family's, else ``portable``."""
    name = (model or "").lower().rsplit("/", 1)[-1]
    for fragments, shape, family in _FAMILIES:
        if any(f in name for f in fragments):
            return SHAPES[shape].with_source(f"model family {family}")
    return SHAPES["portable"].with_source("default")
