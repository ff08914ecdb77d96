"""Distillers: each shape keeps its signal."""

from __future__ import annotations

import json

from arcana_jupyter.adaptive.distillers import distill, distill_json, distill_log, distill_table, distill_traceback

TRACEBACK = """some output first
Traceback (most recent call last):
  File "/home/u/nb.py", line 3, in <module>
    main()
  File "/home/u/nb.py", line 2, in main
    load()
  File "/home/u/lib/io.py", line 40, in load
    df = pd.read_csv(path)
  File "/usr/lib/pandas/readers.py", line 912, in read_csv
    return _read(f)
KeyError: 'region'
"""


def test_traceback_keeps_exception_and_last_frames() -> None:
    d = distill_traceback(TRACEBACK)
    assert d is not None and d.kind == "traceback"
    assert d.lines[0] == "Python traceback: KeyError: 'region'"
    assert d.lines[1] == "4 frame(s); last 3:"
    assert d.lines[2:] == [
        "  /home/u/nb.py:2 in main — load()",
        "  /home/u/lib/io.py:40 in load — df = pd.read_csv(path)",
        "  /usr/lib/pandas/readers.py:912 in read_csv — return _read(f)",
    ]
    assert distill(TRACEBACK).kind == "traceback"
    assert distill_traceback("no traceback here") is None


def test_chained_tracebacks_describe_the_last() -> None:
    chained = TRACEBACK + "\nDuring handling of the above exception, another exception occurred:\n\n" + \
        TRACEBACK.replace("KeyError: 'region'", "ValueError: bad region").split("\n", 1)[1]
    d = distill_traceback(chained)
    assert d is not None and d.lines[0] == "Python traceback: ValueError: bad region" and "(2 tracebacks" in d.lines[1]


def test_json_structure_and_sizes() -> None:
    data = {"meta": {"count": 3, "source": "api"}, "items": [{"id": i, "name": f"n{i}", "tags": []} for i in range(3)],
            "ok": True, "note": "x" * 100}
    d = distill_json(json.dumps(data))
    assert d is not None and d.kind == "json"
    text = d.text()
    assert d.lines[0].startswith("JSON object(4 keys)")
    for part in ("meta: object(2 keys)", "count: number", "items: array(3)", "[items: object]",
                 "item keys: id, name, tags", "ok: bool", "note: string(100)"):
        assert part in text, part
    arr = distill_json(json.dumps([1, 2, "x"]))
    assert arr is not None and arr.lines[0].startswith("JSON array(3)") and "[items: number, string]" in arr.text()
    assert distill_json("{not json") is None and distill_json("plain") is None


def test_csv_shape_columns_ranges_head() -> None:
    rows = ["region,year,sales"] + [f"r{i % 4},{2020 + i % 5},{100 + i}" for i in range(200)]
    d = distill_table("\n".join(rows))
    assert d is not None and d.kind == "table"
    assert d.lines[0] == "CSV table: 200 rows x 3 columns"
    assert d.lines[1] == "columns: region, year, sales"
    assert d.lines[2] == "numeric ranges: year [2020 .. 2024], sales [100 .. 299]"
    assert d.lines[3] == "head:" and d.lines[4] == "  region,year,sales" and len(d.lines) == 10
    tsv = distill_table("a\tb\n1\t2\n3\t4")
    assert tsv is not None and tsv.lines[0] == "TSV table: 2 rows x 2 columns"


def test_pandas_and_markdown_tables() -> None:
    frame = "   region  sales\n0   north    120\n1   south     80\n..     ...    ...\n\n[1000 rows x 2 columns]"
    d = distill_table(frame)
    assert d is not None and d.lines[:2] == ["DataFrame: 1,000 rows x 2 columns", "columns: region sales"]
    md = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |"
    m = distill_table(md)
    assert m is not None and m.lines[:2] == ["Markdown table: 2 rows x 2 columns", "columns: a, b"]


def test_prose_is_not_a_table() -> None:
    assert distill_table("Hello, world.\nThis is text, with commas, here.\nAnd more") is None


def test_log_counts_and_error_lines() -> None:
    lines = []
    for i in range(300):
        level = "ERROR" if i % 50 == 0 else "WARN" if i % 30 == 0 else "INFO"
        lines.append(f"2026-11-30 01:{i % 60:02d}:00 {level} worker-{i % 3} step {i}")
    d = distill_log("\n".join(lines))
    assert d is not None and d.kind == "log"
    assert d.lines[0] == "Log: 300 lines; ERROR 6, WARNING 8, INFO 286"
    assert d.lines[1] == "error lines (6; first 6):"
    assert d.lines[2].endswith("ERROR worker-0 step 0")
    assert "warning lines (8; first 4):" in d.lines
    assert distill_log("just\nsome\ntext") is None


def test_plain_text_fallback() -> None:
    d = distill("line one\nline two")
    assert d.kind == "text" and d.lines == ["Text: 2 lines, 17 characters"]


def test_json_lines() -> None:
    rows = [json.dumps({"id": i, "msg": f"m{i}", **({"err": "x"} if i % 2 else {})}) for i in range(10)]
    d = distill_json("\n".join(rows))
    assert d is not None and d.kind == "json"
    assert d.lines[0].startswith("JSON Lines: 10 records")
    assert d.lines[1] == "keys: id, msg, err (5)"
    assert d.lines[2] == 'first: {"id": 0, "msg": "m0"}'
    assert distill_json('{"a": 1}\nnot json') is None


def test_traceback_inside_a_log_keeps_both() -> None:
    log = "\n".join(f"2026-11-30 INFO step {i}" for i in range(10)) + "\n2026-11-30 ERROR crashed\n" + TRACEBACK
    d = distill(log)
    assert d.kind == "traceback" and d.lines[0] == "Python traceback: KeyError: 'region'"
    assert d.lines[-1].startswith("Log: ") and "ERROR 1" in d.lines[-1] and "INFO 10" in d.lines[-1]
