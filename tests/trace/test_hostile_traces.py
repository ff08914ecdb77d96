"""Hostile trace files: type-confused metadata (a deterministic table of single-field mutations),
symbolic links leading out of the trace folder, terminal escapes in recorded text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted_chat import call, say
from servers.otlp_receiver import OTLPReceiver

from arcana_jupyter.cli import main
from arcana_jupyter.exceptions import TraceError
from arcana_jupyter.trace import TraceReader, TraceWriter
from arcana_jupyter.trace.recorded_prompt import PromptReplay

MUTATIONS: tuple[Any, ...] = (5, "str", [1, "x"], {"k": 1}, None, True, -1.5)


def _other(value: Any, n: int) -> list[Any]:
    """``n`` values of another JSON type than ``value`` (deterministic)."""
    return [m for m in MUTATIONS if type(m) is not type(value)][:n]


@pytest.fixture
def receiver() -> Iterator[OTLPReceiver]:
    server = OTLPReceiver()
    yield server
    server.close()


@pytest.fixture
def recorded(make_runtime: Any, tmp_path: Path) -> list[str]:
    """The lines of a real run: a tool call, a pin, prompt snapshots, two turns."""

    def area(width: float, height: float) -> float:
        """Area of a rectangle."""
        return width * height

    runtime, _ = make_runtime(
        call("area", {"width": 2, "height": 3}), say("6"),
        call("pin", {"content": "the north region grew 12%", "label": "growth"}), say("pinned"),
        tools=(area,), cognitive_primitives=["pin", "recall"], trace_include_prompt_snapshots=True,
    )
    with runtime.chat() as chat:
        chat.send_sync("How big?")
        chat.send_sync("Pin the growth figure")
        path = chat.trace_path
    assert path is not None
    return path.read_text().splitlines()


def _cases(lines: list[str]) -> list[tuple[int, tuple[str, ...], Any]]:
    """(line, field path, new value): every envelope field, every metadata field and every field one
    level inside a metadata dict, each set to one or two values of another type."""
    cases: list[tuple[int, tuple[str, ...], Any]] = []
    for i, line in enumerate(lines):
        obj = json.loads(line)
        for key in ("event_id", "run_id", "agent", "turn", "ts", "parent_id", "v", "metadata"):
            cases += [(i, (key,), v) for v in _other(obj.get(key), 1)]
        for key, value in obj["metadata"].items():
            cases += [(i, ("metadata", key), v) for v in _other(value, 2 if i < 6 else 1)]
            if isinstance(value, dict):
                for inner, inner_value in value.items():
                    cases += [(i, ("metadata", key, inner), v) for v in _other(inner_value, 1)]
            elif isinstance(value, list) and value and isinstance(value[0], dict):
                for inner, inner_value in value[0].items():
                    cases += [(i, ("metadata", key, "0", inner), v) for v in _other(inner_value, 1)]
    return cases


def _mutated(lines: list[str], line: int, path: tuple[str, ...], value: Any) -> list[str]:
    obj = json.loads(lines[line])
    target: Any = obj
    for part in path[:-1]:
        target = target[int(part)] if isinstance(target, list) else target[part]
    target[path[-1]] = value
    return [*lines[:line], json.dumps(obj), *lines[line + 1:]]


def COMMANDS(run_id: str, endpoint: str) -> list[list[str]]:
    """Every ``arcana trace`` command, with the options that take another reader path (``export``
    sends to our OTLP receiver on 127.0.0.1)."""
    return [
        ["trace", "list"], ["trace", "list", "--json", "--strict"],
        ["trace", "show", run_id, "--context", "--cognitive"], ["trace", "show", run_id],
        ["trace", "show", run_id, "--errors", "--json"], ["trace", "show", run_id, "--turn", "2", "--strict"],
        ["trace", "replay", run_id], ["trace", "replay", run_id, "--turn", "1"],
        ["trace", "replay", run_id, "--turn", "2", "--json"], ["trace", "replay", run_id, "--turn", "1", "--step", "1",
                                                                "--decision-only"],
        ["trace", "replay", run_id, "--turn", "2", "--prompt-only"],
        ["trace", "rebuild", run_id, "--turn", "1"], ["trace", "rebuild", run_id, "--turn", "2", "--json"],
        ["trace", "rebuild", run_id, "--turn", "1", "--strategy", "aggressive_truncate", "--window", "400"],
        ["trace", "export", run_id, "--otlp", "--endpoint", endpoint, "--timeout", "5"],
    ]


def _one_line_or_result(code: int, err: str, argv: list[str] | None = None) -> str | None:
    """What is wrong with a CLI outcome, or None: exit 0, or one ``arcana: error:`` line, no traceback
    (``trace rebuild`` may also exit 3: the rebuilt prompt's digest does not match the recorded one)."""
    if "Traceback" in err or "this is a bug" in err:
        return f"exit {code}: {err[-300:]}"
    if argv is not None and argv[1] == "rebuild" and code == 3:
        return None
    errors = [x for x in err.splitlines() if x.startswith("arcana: error:")]
    if code != 0 and len(errors) != 1:
        return f"exit {code} without exactly one error line: {err[-300:]}"
    return None


def test_single_field_type_mutations_never_give_a_traceback(recorded: list[str], tmp_path: Path,
                                                            receiver: OTLPReceiver,
                                                            capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import functools

    from arcana_jupyter import cli

    monkeypatch.setattr(cli, "build_parser", functools.lru_cache(cli.build_parser))  # argparse setup is the slow part
    run_id = json.loads(recorded[0])["run_id"]
    cases = _cases(recorded)
    assert len(cases) > 150
    problems: list[str] = []
    for n, (line, path, value) in enumerate(cases):
        folder = tmp_path / f"case{n}"
        folder.mkdir()
        (folder / f"{run_id}.jsonl").write_text("\n".join(_mutated(recorded, line, path, value)) + "\n")
        where = f"line {line + 1} {'.'.join(path)}={value!r}"
        for argv in COMMANDS(run_id, receiver.url):
            code = cli.main([*argv, "--dir", str(folder)])
            problem = _one_line_or_result(code, capsys.readouterr().err, argv)
            if problem:
                problems.append(f"{where}: {' '.join(argv)}: {problem}")
        reader = TraceReader(folder, shared=False)
        for turn in (1, 2):
            try:
                result = reader.replay_prompt(run_id, turn)
            except TraceError:
                continue
            except Exception as exc:
                problems.append(f"{where}: replay_prompt({turn}) raised {type(exc).__name__}: {exc}"[:400])
                continue
            assert result is None or isinstance(result, PromptReplay)
    assert not problems, f"{len(problems)} of {len(cases)} cases:\n" + "\n".join(problems[:20])
    assert len(receiver.requests) > len(cases) // 2  # most mutated runs still export


def test_a_numeric_model_does_not_break_listing_the_folder(recorded: list[str], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    run_id = json.loads(recorded[0])["run_id"]
    (tmp_path / f"{run_id}.jsonl").write_text("\n".join(_mutated(recorded, 0, ("metadata", "model"), 5)) + "\n")
    (tmp_path / "r_20260101_000000_abcdef.jsonl").write_text(recorded[0].replace(run_id, "r_20260101_000000_abcdef"))
    assert main(["trace", "list", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert run_id in out and "r_20260101_000000_abcdef" in out


def test_a_misshapen_budget_snapshot_is_a_trace_error(recorded: list[str], tmp_path: Path) -> None:
    run_id = json.loads(recorded[0])["run_id"]
    line = next(i for i, x in enumerate(recorded) if '"prompt_snapshot"' in x)
    (tmp_path / f"{run_id}.jsonl").write_text(
        "\n".join(_mutated(recorded, line, ("metadata", "budget_snapshot"), {"used": "many"})) + "\n")
    with pytest.raises(TraceError, match="prompt_snapshot"):
        TraceReader(tmp_path, shared=False).replay_prompt(run_id, json.loads(recorded[line])["turn"])


# -- terminal escapes -------------------------------------------------------------------------------


def test_trace_show_prints_terminal_controls_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with TraceWriter(tmp_path / "r_1.jsonl", "r_1") as writer:
        writer.emit_json("run_start", {"model": "m\x1b]0;owned\x07"})
        writer.emit_json("user_message", {"message": {"role": "user",
                                                      "content": "hi \x1b[31mred\x1b[0m\x07 \x9b2J \u202eevil"},
                                          "history_index": 1}, turn=1)
        writer.emit_json("turn_end", {"status": "ok", "reply": "bye\r\x1b[2K"}, turn=1)
    for argv in (["trace", "show", "r_1"], ["trace", "show", "r_1", "--json"], ["trace", "list"]):
        assert main([*argv, "--dir", str(tmp_path)]) == 0
        out = capsys.readouterr()
        text = out.out + out.err
        assert not any(c in text for c in "\x1b\x07\x9b\r\u202e"), repr(text)
    assert main(["trace", "show", "r_1", "--dir", str(tmp_path)]) == 0
    assert "\\x1b[31mred" in capsys.readouterr().out


# -- symbolic links ---------------------------------------------------------------------------------


def test_a_symlink_leaving_the_trace_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "private" / "notes.jsonl"
    with TraceWriter(outside, "r_x") as writer:
        writer.emit_json("run_start", {"model": "secret-notes"})
    folder = tmp_path / "analysis.arcana"
    folder.mkdir()
    with TraceWriter(folder / "r_real.jsonl", "r_real") as writer:
        writer.emit_json("run_start", {"model": "m"})
    (folder / "r_link.jsonl").symlink_to(outside)
    (folder / "r_alias.jsonl").symlink_to(folder / "r_real.jsonl")  # inside the folder: fine

    reader = TraceReader(folder, shared=False)
    assert reader.run_ids() == ["r_alias", "r_real"]
    assert any("r_link.jsonl" in w and "symbolic link" in w for w in reader.warnings)
    with pytest.raises(TraceError, match="refused"):
        reader.path_for("r_link")
    assert "r_link" in TraceReader(folder, shared=False, follow_symlinks=True).run_ids()

    assert main(["trace", "show", "r_link", "--dir", str(folder)]) == 1
    out = capsys.readouterr()
    assert "secret-notes" not in out.out + out.err and out.err.count("arcana: error:") == 1
    assert main(["trace", "list", "--dir", str(folder)]) == 0
    out = capsys.readouterr()
    assert "secret-notes" not in out.out and "symbolic link" in out.err


def test_the_writer_does_not_write_through_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious\n")
    (tmp_path / "r_1.jsonl").symlink_to(target)
    with pytest.raises(TraceError, match="symbolic link"):
        TraceWriter(tmp_path / "r_1.jsonl", "r_1")
    assert target.read_text() == "precious\n"
