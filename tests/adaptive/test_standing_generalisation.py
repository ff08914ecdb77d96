"""The recogniser on sentences written apart from the benchmark's splits (tests/adaptive/standing_cases.py):
what it measured when the rules were generalised is the floor. Both halves are measured; only the ``tune``
half's misses were read while the rules changed."""

from __future__ import annotations

from arcana_jupyter.adaptive.standing import judge

from .standing_cases import measure


def test_the_tune_half() -> None:
    s = measure("tune")
    assert (s.said, s.traps, s.changes) == (69, 38, 11)
    assert s.found >= 66 and s.traps_kept == 0 and s.changes_right == 11, s.line("tune")


def test_the_held_half() -> None:
    s = measure("held")
    assert (s.said, s.traps, s.changes) == (62, 41, 17)
    assert s.found >= 62 and s.traps_kept == 0, s.line("held")
    assert s.changes_right >= 7, s.line("held")  # the weak part: a change worded apart from its item


def test_the_forms_the_dev_rules_missed() -> None:
    """Forms named when the first rules missed the test split (worded here anew)."""
    kept = {
        "For charts, I like plotly better than matplotlib.": "preference",  # a topic before the clause
        "Dates should always be ISO 8601 in the API.": "constraint",  # a noun subject with a modal
        "Migrations must never drop a column.": "constraint",
        "No AGPL libraries, legal said so.": "constraint",  # verbless
        "Stay under 150 words per reply.": "instruction",  # a scope word
        "Log with structlog in anything you script.": "instruction",
    }
    for sentence, kind in kept.items():
        f = judge(sentence).finding
        assert f is not None and f.kind == kind, (sentence, judge(sentence))
    for sentence in ("I like the new desk, the old one had no windows.",  # "windows" is not Windows
                     "My flatmate always leaves the lights on.", "Tell the new intern to never push to main.",
                     "If we ever had to support Windows, what would break?", "The wiki says to always squash."):
        assert judge(sentence).finding is None, judge(sentence)
