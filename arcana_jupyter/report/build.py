"""Assemble the report page from a notebook file, its traces and (optionally) a verification."""

from __future__ import annotations

import datetime as _dt
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from .. import render
from ..exceptions import ArcanaError
from ..render.fragments import cost_text, int_text
from ..render.md import highlight_css
from ..render.templating import render_template
from ..schema.bundle import MIME_TYPE
from ..schema.events import TurnEnd, UsageRecord
from ..trace.reader import TraceReader
from ..trace.redact import mask_secrets
from ..version import __version__
from .embed import embed_traces
from .notebook_html import NOTEBOOK_CSS, notebook_body_html, pygments_css, strip_external
from .sources import EmbeddedTraces, NotebookRun, locate_runs, notebook_turns
from .verify import VerifyResult, verify_notebook


@dataclass
class RunSummary:
    run_id: str
    agent: str
    model: str = ""
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cost_usd: float = 0.0
    primitive_calls: int = 0
    tool_calls: int = 0
    errors: int = 0
    points: list[dict[str, Any]] = field(default_factory=list)


def collect_bundles(nb: Any) -> list[dict[str, Any]]:
    """Every turn bundle displayed in the notebook, in cell order."""
    bundles = []
    for cell in nb.cells:
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            data = output.get("data") or {}
            if MIME_TYPE in data and isinstance(data[MIME_TYPE], dict):
                bundles.append(dict(data[MIME_TYPE]))
    return bundles


def sessions_of(bundles: list[dict[str, Any]]) -> dict[str, str]:
    """Session (agent) name -> run id, from the notebook's outputs (the last run of each name)."""
    out: dict[str, str] = {}
    for bundle in bundles:
        if bundle.get("agent") and bundle.get("run_id"):
            out[str(bundle["agent"])] = str(bundle["run_id"])
    return out


def _replayed_runs(nb: Any) -> dict[str, int]:
    """Run id -> 1-based cell number of a replay scrubber the notebook displays (``%arcana_replay``)."""
    found: dict[str, int] = {}
    for number, cell in enumerate(nb.cells, start=1):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            data = output.get("data") or {}
            ids: list[str] = []
            for mime, value in data.items():
                if "arcana" in mime and "replay" in mime and isinstance(value, dict):
                    ids += [str(value.get("run_id") or "")] + [
                        str(f.get("run_id") or "") for f in value.get("frames") or [] if isinstance(f, dict)
                    ]
            html = data.get("text/html")
            text = "".join(html) if isinstance(html, list) else str(html or "")
            if MIME_TYPE not in data and re.search(r"""class=["'][^"']*\barcana-scrub\b""", text):
                ids += re.findall(r"r_\d{8}_\d{6}_[0-9a-f]+", text)  # a %arcana_replay scrubber, not a turn
            for run_id in ids:
                if run_id:
                    found.setdefault(run_id, number)
    return found


def summarize(reader: TraceReader, run_id: str, agent: str) -> RunSummary:
    info = reader.run_info(run_id)
    summary = RunSummary(run_id=run_id, agent=agent, model=info.model or "")
    for event in reader.events(
        run_id, agent=agent, event_types=("turn_end", "cognitive_primitive", "tool_call", "error")
    ):
        if event.event_type == "turn_end" and isinstance(typed := event.typed(), TurnEnd):
            end = typed.metadata
            usage = end.usage or UsageRecord()
            summary.turns += 1
            summary.input_tokens += usage.input_tokens
            summary.output_tokens += usage.output_tokens
            summary.cached_input_tokens += usage.cached_input_tokens
            summary.cost_usd += end.cost_usd or 0.0
            summary.points.append({"label": str(event.turn), "input_tokens": usage.input_tokens,
                                   "output_tokens": usage.output_tokens,
                                   "cached_input_tokens": usage.cached_input_tokens})
        elif event.event_type == "cognitive_primitive":
            summary.primitive_calls += 1
        elif event.event_type == "tool_call":
            summary.tool_calls += 1
        else:
            summary.errors += 1
    return summary


def prompts_section(reader: TraceReader, run_id: str, agent: str, *,
                    turns: list[int] | None = None, full: set[int] | None = None) -> str:
    """HTML: every call's prompt as sent (``prompt_sent``), each turn as what changed since the previous
    prompt (the shared prefix a count); all text escaped. Self-contained: one section per run, which the
    report's layout places after the run's replay. Empty for a trace without content.

    ``turns`` and ``full`` (a long run): the prompts of the turns in ``full`` only (those the replay
    shows in full), each other stretch of ``turns`` one line — so the section, and the time to make it,
    grow with the turns shown, not with every prompt of the run."""
    try:
        prompts = [p.model_dump(mode="json") for p in reader.prompts_sent(run_id, agent, turns=full)]
    except ArcanaError as exc:
        return render.sent_prompts_html([], missing=f"cannot be read: {exc}")
    if prompts:
        return render.sent_prompts_html(prompts, turns=turns if full is not None else None)
    missing = ("not recorded in this trace (written before the prompt_sent event existed, or with "
               "trace_content='none'); each turn's replay shows the prompt rebuilt from the transcript")
    return render.sent_prompts_html([], missing=missing)


def _prompts(reader: TraceReader, run: NotebookRun, turns: list[int], full: set[int] | None) -> str:
    if full is None:
        return prompts_section(reader, run.run_id, run.agent)
    return prompts_section(reader, run.run_id, run.agent, turns=turns, full=full)


def _bundle_summary(run: NotebookRun, nb: Any) -> RunSummary:
    """A run whose trace is missing, summarised from the turns the notebook shows."""
    summary = RunSummary(run_id=run.run_id, agent=run.agent, model="(trace missing)")
    for t in notebook_turns(nb):
        if (t.agent, t.run_id) != (run.agent, run.run_id):
            continue
        b = t.bundle
        raw = b.get("usage")
        usage: dict[str, Any] = raw if isinstance(raw, dict) else {}
        summary.turns += 1
        summary.input_tokens += int(usage.get("input_tokens") or 0)
        summary.output_tokens += int(usage.get("output_tokens") or 0)
        summary.cached_input_tokens += int(usage.get("cached_input_tokens") or 0)
        summary.cost_usd += float(b.get("cost_usd") or 0)
        summary.primitive_calls += len(b.get("primitives") or [])
        summary.points.append({"label": str(t.turn), **{k: int(usage.get(k) or 0) for k in
                               ("input_tokens", "output_tokens", "cached_input_tokens")}})
    return summary


def _where(run: NotebookRun, notebook: Path) -> str:
    if run.path is None:
        return "missing"
    if run.source == "embedded":
        return "embedded in the notebook"
    return run.path.relative_to(notebook.parent).as_posix()


ReportProgress = Callable[[str, int, int], None]
"""``progress(what, done, total)``: what the report is doing (``"replay <run> (<agent>)"`` with the
turns done so far, then ``"page"``), for a caller that shows it (``arcana report`` on stderr); and
``"warning: ..."``, one line on a run whose replay the page shows in part or not at all."""


def _turns_progress(progress: ReportProgress | None, what: str) -> Callable[[int, int], None] | None:
    if progress is None:
        return None
    report = progress

    def turns(done: int, total: int) -> None:
        report(what, done, total)

    return turns


READING_NOTE_BYTES = 5_000_000
"""A trace this large gets a progress line before it is read (``report: reading the trace of …``)."""


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


LONG_RUN_TURNS = 100
"""A run with more turns than this gets the long-run replay in the report: the scrubber holds only the
turns worth a full look (:func:`_notable`, plus the first and last :data:`EDGE_TURNS`), at most
:data:`DETAIL_MAX` of them, and a table gives every turn one compact row. The page then grows with
the turns, not with turns times history (367 MB for a 1,000-turn run before)."""
EDGE_TURNS = 5
DETAIL_MAX = 40
DIFF_LIMIT = 40
"""Rows of a turn's changes table the long-run report shows (the rest are counted)."""


def _notable(frame: dict[str, Any], previous_pins: list[str] | None) -> tuple[int, str] | None:
    """Why a turn of a long run deserves its full frame in the report, with a priority (lower first):
    it failed, a primitive ran or the pins changed, or a tool ran (the turn has more than one step)."""
    if frame.get("status") not in (None, "ok") or frame.get("errors"):
        return 0, "error" if frame.get("errors") else f"status {frame.get('status')}"
    if frame.get("primitives"):
        return 1, "primitive call"
    pins = [str(p.get("pin_id")) for p in frame.get("pins") or []]
    if previous_pins is not None and pins != previous_pins:
        return 1, "pins changed"
    if int((frame.get("step") or {}).get("step") or 0) > 0:
        return 2, "tool call"
    return None


def _replay_section(run: NotebookRun, reader: TraceReader, turns: list[int],
                    progress: ReportProgress | None) -> tuple[str | None, set[int] | None, str | None]:
    """The run's replay for the page (None: no turns): every frame for a short run, the long-run form
    (see :data:`LONG_RUN_TURNS`) for a long one; the turns it shows in full (None: every turn); and one
    line on the turns whose decision cannot be read (None: none; the others replay)."""
    from ..jupyter.replay_frames import build_frames, decision_errors, with_rows

    assert run.path is not None
    uid = f"{run.agent}-{uuid.uuid4().hex[:6]}"
    turns_progress = _turns_progress(progress, f"replay {run.run_id} ({run.agent})")
    if len(turns) <= LONG_RUN_TURNS:
        frames = build_frames(run.path, run.run_id, agent=run.agent, reader=reader, progress=turns_progress)
        return (render.replay_html(frames, uid=uid, include_style=False, grouped=True) if frames else None), None, \
            decision_errors(frames)
    edges = set(turns[:EDGE_TURNS] + turns[-EDGE_TURNS:])
    # no digest check per frame (it rebuilds every prompt with the builder): --verify re-executes the
    # notebook and checks every turn; no rows (the frames' fast path), then the rows of the turns shown
    # in full only, read on demand
    frames = build_frames(run.path, run.run_id, agent=run.agent, reader=reader, progress=turns_progress,
                          verify=False, rows=False)
    if not frames:
        return None, _edges(turns), None
    notes: dict[Any, str] = {}
    ranked: list[tuple[int, int, Any]] = []
    pins: list[str] | None = None
    for n, frame in enumerate(frames):
        why = _notable(frame, pins)
        pins = [str(p.get("pin_id")) for p in frame.get("pins") or []]
        if frame.get("turn") in edges:
            ranked.append((-1, n, frame.get("turn")))
            notes[frame.get("turn")] = why[1] if why else ("first turns" if n < EDGE_TURNS else "last turns")
        elif why is not None:
            ranked.append((why[0], n, frame.get("turn")))
            notes[frame.get("turn")] = why[1]
    chosen = {n for _, n, _ in sorted(ranked)[:DETAIL_MAX]}
    detailed = [with_rows(f, reader) for n, f in enumerate(frames) if n in chosen]
    html = render.long_replay_html(frames, detailed, uid=uid, notes=notes, skipped=len(ranked) - len(chosen),
                                   diff_limit=DIFF_LIMIT)
    return html, {int(f["turn"]) for f in detailed if isinstance(f.get("turn"), int)}, decision_errors(frames)


def _edges(turns: list[int]) -> set[int] | None:
    """The turns of a run whose prompts the report shows when it has no replay to choose them: every
    turn of a short run (None), the first and last :data:`EDGE_TURNS` of a long one."""
    return None if len(turns) <= LONG_RUN_TURNS else set(turns[:EDGE_TURNS] + turns[-EDGE_TURNS:])


def render_report(notebook: Path, nb: Any, *, verification: VerifyResult | None = None,
                  progress: ReportProgress | None = None) -> str:
    """The report page as one HTML string."""
    notebook = Path(notebook).resolve()
    embedded = EmbeddedTraces(nb)
    try:
        return _render(notebook, nb, embedded, verification, progress)
    finally:
        embedded.cleanup()


def _render(notebook: Path, nb: Any, embedded: EmbeddedTraces, verification: VerifyResult | None,
            progress: ReportProgress | None = None) -> str:
    runs = locate_runs(notebook, nb, embedded)
    summaries: list[RunSummary] = []
    replays: list[dict[str, Any]] = []
    shown = _replayed_runs(nb)
    for run in runs:
        entry: dict[str, Any] = {"agent": run.agent, "run_id": run.run_id}
        if run.path is None:
            summaries.append(_bundle_summary(run, nb))
            replays.append({**entry, "kind": "missing", "text": "; ".join(run.problems)})
            continue
        if progress is not None and _size(run.path) >= READING_NOTE_BYTES:
            progress(f"reading the trace of {run.run_id} ({run.agent}, {_size(run.path) / 1e6:.1f} MB)", 0, 1)
        reader = TraceReader(run.path)
        ordered: list[int] = []
        try:
            summary = summarize(reader, run.run_id, run.agent)
            # the turns the trace holds or the notebook shows: what --verify checks, so both say the same
            turns = {t for t in reader.list_turns(run.run_id, run.agent) if t >= 1} | set(run.turns)
            ordered = sorted(t for t in turns if t >= 1)
            summary.turns = max(summary.turns, len(turns))
            summaries.append(summary)
            if run.run_id in shown:
                entry["prompts"] = _prompts(reader, run, ordered, _edges(ordered))
                replays.append({**entry, "kind": "shown", "text": shown[run.run_id]})
                continue
            html, full, refused = _replay_section(run, reader, ordered, progress)
        except (ArcanaError, MemoryError) as exc:
            text = str(exc) if isinstance(exc, ArcanaError) else ("ran out of memory reading the trace: it holds more "
                                                                  "than its limits allow for (docs/SECURITY.md)")
            entry["prompts"] = _prompts(reader, run, ordered, _edges(ordered))
            replays.append({**entry, "kind": "error", "text": text})
            if progress is not None:
                progress(f"warning: {run.run_id} ({run.agent}): cannot replay: {text}", 0, 1)
            continue
        entry["prompts"] = _prompts(reader, run, ordered, full)
        if refused is not None:  # the other turns replay: the page and the command say which cannot
            entry["note"] = refused
            if progress is not None:
                progress(f"warning: {run.run_id} ({run.agent}): {refused}", 0, 1)
        if html is None:
            replays.append({**entry, "kind": "empty"})
            continue
        replays.append({**entry, "kind": "replay", "html": html})
    total = RunSummary(run_id="", agent="")
    for s in summaries:
        for name in ("turns", "input_tokens", "output_tokens", "primitive_calls", "tool_calls", "errors"):
            setattr(total, name, getattr(total, name) + getattr(s, name))
        total.cost_usd += s.cost_usd
        total.points += [
            {**p, "label": p["label"] if len(summaries) == 1 else f"{s.agent}:{p['label']}"} for p in s.points
        ]
    folders = sorted({_where(r, notebook).rsplit("/", 1)[0] + "/" for r in runs
                      if r.path is not None and r.source != "embedded"})
    extra = ""
    if any(r.source == "embedded" for r in runs):
        extra += " (embedded in the notebook)"
    if any(r.path is None for r in runs):
        extra += f" ({sum(r.path is None for r in runs)} run(s) missing)"
    if not folders and not extra:
        extra = "none"
    where = {(r.agent, r.run_id): _where(r, notebook) for r in runs}
    stats = [
        (int_text(total.turns), "turns"),
        (int_text(total.input_tokens), "prompt tokens"),
        (int_text(total.output_tokens), "reply tokens"),
        (cost_text(total.cost_usd), "cost"),
        (int_text(total.primitive_calls), "primitive calls"),
        (int_text(total.tool_calls), "tool calls"),
    ]
    verify = None
    if verification is not None:
        verify = {"ok": verification.ok, "summary": verification.summary(), "seconds": verification.seconds,
                  "errors": list(verification.errors), "checks": list(verification.checks)}
    if progress is not None:
        progress("page", 0, 1)
    body = mask_secrets(strip_external(notebook_body_html(nb)))  # the notebook's own cells: masked like the rest
    page = render_template(
        "report.html.j2",
        name=notebook.name,
        generated=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        version=__version__,
        folders=folders,
        traces_extra=extra.strip() if not folders else extra,
        verify=verify,
        stats=stats,
        runs=[{**vars(s), "where": where.get((s.agent, s.run_id), "")} for s in summaries],
        chart=render.tokens_chart_svg(total.points),
        notebook=body,
        replays=replays,
        # every Pygments rule: the notebook's input cells (.highlight) and the replies' code (.arcana-hl)
        css="\n".join([render.CSS, NOTEBOOK_CSS, pygments_css(), highlight_css()]),
    )
    return strip_external(page)


def build_report(notebook: str | Path, *, output: str | Path | None = None, verify: bool = False,
                 timeout: int = 600, embed: bool = False, progress: ReportProgress | None = None) -> Path:
    """Write the report of ``notebook`` (default ``NOTEBOOK.report.html`` beside it); returns its path.

    ``embed=True`` first stores the notebook's traces in its own metadata (see :mod:`.embed`).
    """
    path = Path(notebook).resolve()
    if not path.is_file():
        raise ArcanaError(f"no notebook at {path}")
    if embed:
        embed_traces(path)
    nb = nbformat.read(path, as_version=4)
    verification = None
    if verify:
        verification = verify_notebook(path, timeout=timeout)
    return write_report(path, nb, output=output, verification=verification, progress=progress)


def write_report(notebook: Path, nb: Any, *, output: str | Path | None = None,
                 verification: VerifyResult | None = None, progress: ReportProgress | None = None) -> Path:
    out = Path(output) if output is not None else notebook.with_name(notebook.stem + ".report.html")
    out.write_text(render_report(notebook, nb, verification=verification, progress=progress), encoding="utf-8")
    return out
