"""The static views come from autoescaped Jinja2 templates; every raw insertion says why."""

from __future__ import annotations

import re
from pathlib import Path

import arcana_jupyter
from arcana_jupyter.render.templating import environment, render_macro

PACKAGE = Path(arcana_jupyter.__file__).parent
TEMPLATES = PACKAGE / "render" / "templates"
# Modules whose HTML must come from templates (render/fragments.py keeps small helpers for other views).
TEMPLATED = ["render/turn.py", "render/replay_view.py", "render/chart.py", "render/md.py", "report/build.py"]


def test_autoescape_is_on() -> None:
    env = environment()
    assert env.autoescape is True
    assert render_macro("turn.html.j2", "notice", "<b onclick=x>", "info").count("&lt;b onclick=x&gt;") == 1


def test_every_safe_filter_carries_a_reason_on_its_line() -> None:
    templates = sorted(TEMPLATES.glob("*.j2"))
    assert {t.name for t in templates} >= {
        "turn.html.j2", "replay.html.j2", "report.html.j2", "macros.html.j2", "chart.svg.j2"}
    found = 0
    for template in templates:
        for number, line in enumerate(template.read_text().splitlines(), start=1):
            if re.search(r"\|\s*safe\b", line):
                found += 1
                assert re.search(r"\{#\s*safe:\s*\S.{8,}#\}", line), (
                    f"{template.name}:{number}: |safe without a '{{# safe: why #}}' comment")
    assert found >= 4


def test_no_markup_bypass_and_no_html_literals_in_python() -> None:
    tag = re.compile(r"""["'][^"'\n]*<(div|span|table|tr|td|th|pre|details|summary|h[1-6]|svg|rect|style|code|b|p)\b""")
    for rel in TEMPLATED:
        source = (PACKAGE / rel).read_text()
        assert "Markup(" not in source and "|safe" not in source, rel
        if rel == "render/md.py":
            continue  # the markdown-it render rules: each escapes its text (tests/render/test_markdown.py)
        assert not tag.search(source), f"{rel}: HTML built in Python: {tag.search(source)}"


def test_templates_are_package_data() -> None:
    # hatch ships every file under arcana_jupyter/ in the wheel (pyproject: packages = ["arcana_jupyter"]);
    # make sure nothing excludes the templates.
    import fnmatch
    import tomllib

    wheel = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert "arcana_jupyter" in wheel["packages"]
    for template in TEMPLATES.glob("*.j2"):
        rel = template.relative_to(PACKAGE.parent).as_posix()
        assert not any(fnmatch.fnmatch(rel, pattern) or rel.startswith(pattern.rstrip("/*") + "/")
                       for pattern in wheel.get("exclude", [])), rel
