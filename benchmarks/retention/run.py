"""Evidence retention: does the working set still hold the turns a question is about?

Run: ``python -m benchmarks.retention.run [FILE ...] [--budgets 1024,2048,3072] [--reserve 256]``
(default file: ``benchmarks/retention/data/notebook_qa.json``; writes
``benchmarks/results/retention.md``). ``--working-set`` reads the budgets as working-set sizes
(window = budget + reserve, as issue 14 measures); ``--embeddings auto|off|both`` chooses the
builder's relevance (``both``: a row for each, and a line per budget saying where embeddings keep
less than lexical); ``--old-fusion`` adds a row for the fusion of builds recorded before
``settings()["fusion"]``; ``--cache DIR`` keeps the computed vectors.

Input: a JSON list of conversations (or ``{"conversations": [...]}``)::

    [{"id": "c0", "system": "optional system prompt",
      "turns": [{"id": "t0", "role": "user", "content": "..."}, ...],
      "questions": [{"id": "q0", "question": "...", "evidence": ["t3", "t7"]}, ...]}]

For each question the whole conversation is the history and the question is the current input.
The working set is built at each window size, and for every evidence turn we look at its decision:
kept verbatim (L0), content visible (L0-L2: kept, or compressed to head and tail / head), or present
at any fidelity (including an L3 placeholder). The baseline is a plain tail window: the system prompt,
the question and as many of the most recent turns as fit, verbatim — what a chat client without
a context builder sends.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, RootModel, ValidationError, model_validator

from arcana_jupyter.context import TokenBudget, WorkingSetBuilder
from arcana_jupyter.context.relevance import LEGACY_FUSION
from arcana_jupyter.messages import Message
from arcana_jupyter.tokens import REPLY_PRIMING, TokenCounter

DEFAULT_DATA = Path(__file__).parent / "data" / "notebook_qa.json"


class Turn(BaseModel):
    id: str = Field(min_length=1)
    role: Literal["system", "user", "assistant", "tool"]
    content: str


class Question(BaseModel):
    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    evidence: list[str] = Field(min_length=1)
    answer: str | None = None
    kind: Literal["single", "date", "multi", "open"] | None = None
    lexical_overlap: bool | None = None
    """Whether the question shares a content word (stemmed, stop words out) with its evidence."""


class Conversation(BaseModel):
    id: str = Field(min_length=1)
    system: str | None = None
    turns: list[Turn] = Field(min_length=1)
    questions: list[Question]

    @model_validator(mode="after")
    def _ids(self) -> Conversation:
        seen: set[str] = set()
        for t in self.turns:
            if t.id in seen:
                raise ValueError(f"turn id {t.id!r} appears twice in conversation {self.id!r}")
            seen.add(t.id)
        for q in self.questions:
            missing = [e for e in q.evidence if e not in seen]
            if missing:
                raise ValueError(f"question {q.id!r} of conversation {self.id!r} cites unknown turn id(s) {missing}")
        return self


class Dataset(RootModel[list[Conversation]]):
    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, value: object) -> object:
        if isinstance(value, dict) and "conversations" in value:
            return value["conversations"]
        return value


class DataError(Exception):
    """The input file is missing, not JSON, or not of the documented shape."""


def load(path: Path) -> list[Conversation]:
    """Read and validate a conversation-QA file (raises :class:`DataError` with what to fix)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise DataError(f"{path}: no such file") from exc
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from exc
    try:
        return Dataset.model_validate(raw).root
    except ValidationError as exc:
        problems = "; ".join(
            f"{'/'.join(str(p) for p in err['loc']) or '<top>'}: {err['msg']}" for err in exc.errors()[:5]
        )
        more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        raise DataError(
            f"{path}: not a conversation-QA file: {problems}{more}. Expected a list of "
            '{"id", "turns": [{"id", "role", "content"}], "questions": [{"id", "question", "evidence": [turn ids]}]}'
        ) from exc


@dataclass
class Tally:
    evidence: int = 0
    verbatim: int = 0
    visible: int = 0
    present: int = 0
    prompt_tokens: list[int] = field(default_factory=list)
    used_share: list[float] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)
    violations: int = 0
    by_kind: dict[str, list[int]] = field(default_factory=dict)
    """kind -> [evidence turns, verbatim]; also ``literal`` / ``paraphrase``: the question shares a content word
    with its evidence or not."""

    def kind_row(self) -> dict[str, float]:
        return {k: v[1] / v[0] for k, v in sorted(self.by_kind.items()) if v[0]}

    def row(self) -> tuple[float, float, float, float]:
        n = max(1, self.evidence)
        mean = sum(self.prompt_tokens) / max(1, len(self.prompt_tokens))
        return self.verbatim / n, self.visible / n, self.present / n, mean


def _history(conv: Conversation) -> tuple[list[Message], dict[str, int]]:
    msgs: list[Message] = []
    if conv.system:
        msgs.append(Message(role="system", content=conv.system))
    index: dict[str, int] = {}
    turn = 0
    for t in conv.turns:
        if t.role == "user":
            turn += 1
        index[t.id] = len(msgs)
        msgs.append(Message(role=t.role, content=t.content, turn=turn or None))
    return msgs, index


def tail_only(counter: TokenCounter, history: list[Message], question: Message, available: int) -> tuple[set[int], int]:
    """Indices a plain tail window keeps: system prompt, question, then the most recent turns that fit."""
    kept: set[int] = set()
    used = counter.count_message(question) + REPLY_PRIMING
    start = 0
    if history and history[0].role == "system":
        used += counter.count_message(history[0])
        kept.add(0)
        start = 1
    for i in range(len(history) - 1, start - 1, -1):
        n = counter.count_message(history[i])
        if used + n > available:
            break
        used += n
        kept.add(i)
    return kept, used


def _builders(budget: TokenBudget, counter: TokenCounter, embeddings: str, cache: Path | None,
              variants: bool, old_fusion: bool = False) -> dict[str, WorkingSetBuilder]:
    out: dict[str, WorkingSetBuilder] = {}
    modes = {"auto": ["auto"], "off": ["off"], "both": ["off", "auto"]}[embeddings]
    for mode in modes:
        emb: str | None = "auto" if mode == "auto" else None
        label = "" if embeddings != "both" else (" + embeddings" if mode == "auto" else ", lexical")
        b = WorkingSetBuilder(budget=budget, counter=counter, embedder=emb, embedding_cache=cache)
        if mode == "auto" and b.embedder is None:
            continue
        out[f"builder (auto{label})"] = b
        if mode == "auto" and old_fusion:
            old = WorkingSetBuilder(budget=budget, counter=counter, embedder=b.embedder, fusion=LEGACY_FUSION)
            old.embeddings = b.embeddings
            out["builder (auto + embeddings, old fusion)"] = old
    if variants:
        out["builder (tail_preserve)"] = WorkingSetBuilder(budget=budget, strategy="tail_preserve", counter=counter,
                                                           embedder=None)
        out["builder (auto, recall off)"] = WorkingSetBuilder(budget=budget, counter=counter, recall=False,
                                                              embedder=None)
    return out


def evaluate(conversations: list[Conversation], windows: list[int], reserve: int, *, embeddings: str = "off",
             cache: Path | None = None, variants: bool = True, old_fusion: bool = False,
             ) -> dict[tuple[int, str], Tally]:
    counter = TokenCounter()
    out: dict[tuple[int, str], Tally] = {}
    for window in windows:
        budget = TokenBudget(total_window=window, response_reserve=reserve)
        builders = _builders(budget, counter, embeddings, cache, variants, old_fusion)
        for conv in conversations:
            history, index = _history(conv)
            for q in conv.questions:
                question = Message(role="user", content=q.question)
                evidence = [index[e] for e in q.evidence]
                for name, builder in builders.items():
                    if builder.embeddings is not None:  # embedding new messages is timed apart from the build
                        builder.embeddings.many([question.content])
                    t0 = time.perf_counter()
                    result = builder.build(history, question)
                    ms = (time.perf_counter() - t0) * 1000
                    tally = out.setdefault((window, name), Tally())
                    tally.ms.append(ms)
                    tally.prompt_tokens.append(result.budget.used)
                    tally.used_share.append(result.budget.used / budget.available)
                    tally.violations += result.budget.used > budget.available
                    by_index = {d.index: d for d in result.decision.decisions}
                    for i in evidence:
                        d = by_index[i]
                        ok = d.outcome == "kept" and d.fidelity == "L0"
                        tally.evidence += 1
                        tally.verbatim += ok
                        tally.visible += d.outcome in ("kept", "compressed") and d.fidelity in ("L0", "L1", "L2")
                        tally.present += d.outcome in ("kept", "compressed")
                        overlap = {True: "literal", False: "paraphrase", None: None}[q.lexical_overlap]
                        for kind in (q.kind, overlap):
                            if kind:
                                acc = tally.by_kind.setdefault(kind, [0, 0])
                                acc[0] += 1
                                acc[1] += ok
                kept, used = tail_only(counter, history, question, budget.available)
                tally = out.setdefault((window, "tail-only baseline"), Tally())
                tally.prompt_tokens.append(used)
                for i in evidence:
                    tally.evidence += 1
                    tally.verbatim += i in kept
                    tally.visible += i in kept
                    tally.present += i in kept
    return out


def _table(results: dict[tuple[int, str], Tally], windows: list[int], reserve: int, working_set: bool) -> list[str]:
    lines = [
        "| budget | method | evidence verbatim | content visible | any fidelity | budget used | violations "
        "| median build ms | verbatim by kind |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for (window, name), tally in sorted(results.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        v, vis, p, _mean = tally.row()
        size = window - reserve if working_set else window
        used = statistics.fmean(tally.used_share) if tally.used_share else sum(tally.prompt_tokens) / max(
            1, len(tally.prompt_tokens)) / max(1, window - reserve)
        ms = f"{statistics.median(tally.ms):.1f}" if tally.ms else "-"
        kinds = ", ".join(f"{k} {x:.2f}" for k, x in tally.kind_row().items())
        lines.append(f"| {size:,} | {name} | {v:.2f} | {vis:.2f} | {p:.2f} | {used:.0%} | {tally.violations} | {ms} "
                     f"| {kinds} |")
        print(f"{size:>6} {name:<34} verbatim {v:.2f} visible {vis:.2f} used {used:.0%} ms {ms} {kinds}", flush=True)
    return lines


def _versus_lexical(results: dict[tuple[int, str], Tally], windows: list[int], reserve: int,
                    working_set: bool) -> list[str]:
    """Per budget, where the builder with embeddings keeps less than the lexical one (overall and by kind)."""
    out: list[str] = []
    for window in windows:
        emb = results.get((window, "builder (auto + embeddings)"))
        lex = results.get((window, "builder (auto, lexical)"))
        if emb is None or lex is None:
            continue
        size = window - reserve if working_set else window
        ek, lk = emb.kind_row(), lex.kind_row()
        cells = {"all": (emb.row()[0], lex.row()[0]), **{k: (ek[k], lk[k]) for k in ek if k in lk}}
        below = [f"{k} {e:.2f} < {x:.2f}" for k, (e, x) in cells.items() if e < x - 1e-9]
        out.append(f"- {size:,}: " + ("embeddings keep at least as much as lexical overall and on every kind"
                                      if not below else "embeddings keep less than lexical on " + ", ".join(below)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Evidence retention of the working-set builder vs a tail window.")
    parser.add_argument("files", nargs="*", type=Path, default=[DEFAULT_DATA])
    parser.add_argument("--budgets", default="1024,2048,3072", help="comma-separated window sizes (tokens)")
    parser.add_argument("--reserve", type=int, default=256, help="tokens reserved for the reply")
    parser.add_argument("--working-set", action="store_true",
                        help="budgets are working-set sizes: window = budget + reserve")
    parser.add_argument("--embeddings", choices=("off", "auto", "both"), default="off",
                        help="relevance of the main builder: lexical (off), the bundled model (auto), or both rows")
    parser.add_argument("--cache", type=Path, default=None, help="folder for computed embedding vectors")
    parser.add_argument("--no-variants", action="store_true", help="skip the tail_preserve and recall-off rows")
    parser.add_argument("--old-fusion", action="store_true",
                        help="with embeddings, also a row for the fusion used before the dev tuning on chats")
    parser.add_argument("--no-dict-warm", action="store_true", help="skip the dict-history warm timing")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/retention.md"))
    args = parser.parse_args(argv)
    try:
        budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
    except ValueError:
        print(f"error: --budgets must be comma-separated integers, got {args.budgets!r}", file=sys.stderr)
        return 2
    windows = [b + args.reserve for b in budgets] if args.working_set else budgets
    data: list[tuple[Path, list[Conversation]]] = []
    try:
        for f in args.files:
            data.append((f, load(f)))
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    counter = TokenCounter()
    shown = [os.path.relpath(f) if f.is_absolute() and str(f).startswith(os.getcwd()) else str(f) for f in args.files]
    flags = (" --working-set" if args.working_set else "") + (f" --embeddings {args.embeddings}") + (
        " --no-variants" if args.no_variants else "") + (" --old-fusion" if args.old_fusion else "")
    lines = [
        "# Evidence retention",
        "",
        f"Command: `.venv/bin/python -m benchmarks.retention.run {' '.join(shown)} "
        f"--budgets {args.budgets} --reserve {args.reserve}{flags}`",
        f"Date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}; machine: {os.cpu_count()} CPUs (shared "
        f"with other jobs), Python {platform.python_version()}; load average at start {os.getloadavg()[0]:.2f}",
        "",
        "Per question the whole conversation is the history and the question the current input; one builder per "
        "budget, reused across questions. Verbatim = the evidence turn is in the prompt unchanged (L0); content "
        "visible = L0, L1 or L2; any fidelity = including an L3 placeholder. Budget = the working set "
        + ("(window minus the reply reserve)" if args.working_set else "window") + "; budget used = mean prompt "
        "tokens sent / tokens available; violations = builds over budget. Build ms: the build alone (the question's "
        "embedding, when a model is used, is computed before and timed apart). Tail-only baseline: system prompt, "
        "question and the most recent turns that fit. 'recall off': `recall=False`. Verbatim by kind: the "
        "question's kind (single, date = temporal, multi, open) and literal / paraphrase (the question shares a "
        "content word with its evidence, or none). 'old fusion': the embeddings' fusion before it was tuned on "
        "chats (fixed RRF, BM25 0.25, semantic 1.0).",
        "",
    ]
    for f, conversations in data:
        n_q = sum(len(c.questions) for c in conversations)
        n_e = sum(len(q.evidence) for c in conversations for q in c.questions)
        no_overlap = sum(q.lexical_overlap is False for c in conversations for q in c.questions)
        sizes = [counter.count_messages(_history(c)[0]) for c in conversations]
        print(f"== {f}", flush=True)
        results = evaluate(conversations, windows, args.reserve, embeddings=args.embeddings, cache=args.cache,
                           variants=not args.no_variants, old_fusion=args.old_fusion)
        lines += [
            f"## {os.path.relpath(f) if f.is_absolute() else f}",
            "",
            f"{len(conversations)} conversations, {sum(len(c.turns) for c in conversations)} turns, {n_q} questions "
            f"({no_overlap} share no content word with their evidence), {n_e} evidence turns; conversation sizes "
            f"{min(sizes):,}-{max(sizes):,} tokens.",
            "",
            *_table(results, windows, args.reserve, args.working_set),
            "",
        ]
        versus = _versus_lexical(results, windows, args.reserve, args.working_set)
        if versus:
            lines += ["Embeddings (default fusion) against lexical, evidence verbatim:", "", *versus, ""]
    if args.embeddings != "off":
        from arcana_jupyter.context.embeddings import default_embedder

        model = default_embedder()
        if model is not None:
            texts = [t.content for _, convs in data for c in convs[:1] for t in c.turns[:120]]
            per = []
            for text in texts:
                t0 = time.perf_counter()
                model.embed(text)
                per.append((time.perf_counter() - t0) * 1000)
            line = (f"Embedding ({model.ident}), timed apart from the builds: median {statistics.median(per):.1f} ms "
                    f"per message, p95 {sorted(per)[int(len(per) * 0.95) - 1]:.1f} ms ({len(per)} messages of the "
                    "data sets, one at a time, one BLAS thread); each message is embedded once and cached by content.")
            print(line, flush=True)
            lines += ["## Embedding cost", "", line, ""]
    if not args.no_dict_warm:
        from benchmarks.bench_builder import dict_warm

        dw = dict_warm()
        line = (f"Dict history warm path (benchmarks/bench_builder.py: 1,000 OpenAI-style dicts, 16k window, one "
                f"message more per call, new dicts each call, lexical): median {dw['median']:.2f} ms CPU per build, "
                f"p95 {dw['p95']:.2f} ms (target < 5 ms).")
        print(line, flush=True)
        lines += ["## Dict histories", "", line, ""]
    lines.append(f"Load average at the end: {os.getloadavg()[0]:.2f}.")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
