"""Do standing instructions and preferences reach every later prompt? Real sessions, measured at the probes.

Run: ``python -m benchmarks.retention.standing [FILE ...] [--budgets 4000,16000] [--modes default,classic]
[--limit N] [--details PATH] [--out PATH|-]`` (``--recogniser [--verbose]``: only the recogniser-alone table
below, in seconds, and with ``--verbose`` what it missed and what else it kept) (default file:
``data/standing_dev.json``; writes
``benchmarks/results/standing.md``). The data: :mod:`.make_standing` (long project chats where the user states
instructions, preferences and constraints early, revises or revokes some, and asks late for things that
depend on them: the probes).

Each chat is driven turn by turn through a real :class:`~arcana_jupyter.runtime.ChatSession` started as
``Runtime()`` starts it — the default mode, every default setting — and, beside it, in classic mode
(``context_engine=False``), with ``total_window = B + 1000`` and ``response_reserve = 1000`` for a prompt
budget ``B``, relevance as ``Runtime()`` starts it (``embeddings="auto"``: the bundled embedding model, which also
gives the standing recogniser its learned reader; ``--embeddings off``: lexical, the rules alone), as
:mod:`.conversations` does. The user's turns are sent
with ``chat.send``; a scripted model answers each with the recorded assistant reply, instantly (classic mode's
summariser, when it asks, gets one fixed generic sentence: no model paraphrases here). Nothing else is done to
the session: no pins, no magics, no memory. At each probe turn the prompt as sent (``provider.requests[-1]``)
and the turn's decision (``reply.decision``) are read:

- **the runtime's sections** (:func:`runtime_sections`): every block of the prompt the runtime wrote itself,
  neither a history message (verbatim or compressed in place) nor a quoted earlier message brought back by
  relevance (``name == "recalled"``): the decision rows with ``source == "section"`` (``checkpoint``,
  ``model_claims``, ``turn_digests``, the adaptive tiers, ``memory_digest``, and whatever section a later
  version adds, ``standing`` or ``constraints``, with no change here) and ``source == "pin"`` (the harness never
  pins, so a pin is one the runtime made), read from the builder's layout at the row's ``position``, plus any
  other system message the builder added (classic mode's ``summary``); the system prompt is not one. A section
  counts only if its text is in the prompt as sent (the shaping step moves sections into the head system
  message or the late context block, verbatim);
- **held**: an item (its sentence) is held by a text when the text has at least 60% of the sentence's content
  words (:func:`arcana_jupyter.context.relevance.stems`: stemmed, stop words out, as a set). Two units:
  ``text`` — the sections' text as a whole (the issue's definition) — and ``line`` — one line of it (stricter:
  a long section cannot match by accident, and a constraint list is one item a line);
- **(a) held by the runtime's sections**: per probe, each item it depends on (``depends_on``: the latest
  revision); by kind (instruction, preference, constraint), and over every item in force at the probe
  ("in force");
- **(b) anywhere in the prompt**: the same item in one line of the whole prompt as sent (history and recalled
  messages included), for comparison;
- **(c) superseded held**: the share of probes at which a version revised away or revoked before the probe
  (``must_not_hold``) is held by the sections (one line; should be 0);
- **(d) chit-chat kept**: at the chat's last probe, the trap sentences said before it (chit-chat, one-offs,
  questions, quoted text, the assistant's suggestions) held by one line of the sections, of all traps;
- **(e) the sections' share of the budget**: their tokens (as the decision counts them) over ``B``, mean and
  max over the probes, and which sections were there; and the same for the ``standing`` section alone (the
  user's standing instructions, issue 39: its cap is ``standing_share`` of the available tokens), with how many
  probes' decisions say it shortened items to fit;
- **chance** (a control): the items of the file's other chats whose key this chat never states (never said, in
  any wording), measured at every probe the same way: how often a sentence nobody said is "held" (the
  whole-text unit is lenient at large budgets: a big section has many words, and the assistant's replies follow
  the instructions — "Next steps:" lists reach the turn digests — so compare with this).

Beside the sessions, **the recogniser alone** (:func:`recogniser_tally`): every user message of every chat is
given, in order, to an :class:`~arcana_jupyter.adaptive.engine.AdaptiveEngine` (``begin_turn``, what the runtime
does with each input, then ``acknowledged_standing`` with the recorded reply, what its end of turn does), and the
standing objects it made are compared with the data: items recognised (by kind),
revisions linked to the item they revise, revocations applied, traps kept as standing (by kind; the assistant's
never reach it), other user sentences kept as standing, and the precision (items among everything kept).
``--ack-noise`` (:func:`with_ack_noise`) measures it again with acknowledgements opening replies to ordinary turns
too: the generated chats acknowledge only the turns that state an item. ``--acks`` (:func:`with_acks`) replaces
the generated acknowledgements with none, or with a chat model's own openings from a dev or a test pool
(:data:`ACKS`).

The splits (:mod:`.make_standing`): ``dev`` and ``test`` were in view while the rules were written; ``holdout``
and ``blind`` were written apart (by sessions that never read the recogniser), each measured blind once and then
spent on tuning (the learned reader now learns from them); ``blind2``, written apart the same way, is the test
split nobody tunes on.

``--openings FILE`` reads a set of reply openings instead (``data/reply_openings.json``: 150 acknowledgements of
something lasting and 250 ordinary openings, about 50 of them opening like an acknowledgement, written by a helper
session from its own knowledge; held out until its false positives were read, development data since).

``--details PATH`` writes one JSON line per probe (items held or not, by which section) for tuning.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import datetime as dt
import itertools
import json
import os
import platform
import random
import re
import statistics
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcana_jupyter.context.decisions import ContextDecision
from arcana_jupyter.context.relevance import stems
from arcana_jupyter.messages import RECALLED_NAME, Message
from arcana_jupyter.providers.base import LLMRequest, LLMResponse, Usage
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from benchmarks._machine import cpu_model

HERE = Path(__file__).parent
DEFAULT_FILES = [HERE / "data" / "standing_dev.json"]
RESERVE = 1000
HOLD = 0.6
KINDS = ("instruction", "preference", "constraint")
SUMMARY = "Summary: the user and the assistant worked on the user's project over several sessions."
"""What classic mode's summariser is answered (a fixed sentence: no model paraphrases the chat here)."""


# ---- what the runtime wrote itself ---------------------------------------------------------------------

@dataclass(frozen=True)
class Section:
    """One block of the prompt the runtime wrote itself."""

    name: str
    """The section's name (``checkpoint``, ``turn_digests``, ...), ``pin:<id>`` for a pin, or the system
    message's name (``summary``)."""
    text: str
    tokens: int
    sent: bool
    """True when its text is in the prompt as sent."""


def runtime_sections(decision: ContextDecision, layout: list[Message], sent: str,
                     count: Any = None) -> list[Section]:
    """The runtime's own sections in one prompt (see the module docstring).

    ``decision``: the call's decision (``reply.decision``); ``layout``: the builder's messages, which the
    decision rows' ``position`` index (``chat.sent_messages[(turn, step)]``); ``sent``: the text of the prompt
    as sent (its messages' contents joined), to check that each section reached it; ``count``: a message
    token counter for blocks without a decision row.

    Generic on purpose: any row with ``source == "section"`` is a section, whatever its name, so a new section
    (``standing``, ``constraints``) is counted with no change here; rows with ``source == "pin"`` too. History
    rows are never sections — neither a message kept in place (verbatim or compressed) nor a recalled one
    (``recalled=True``, a system message named :data:`~arcana_jupyter.messages.RECALLED_NAME`) — even when a
    section carries them (``row.section`` set on a history row means the section stands in for it). Any other
    system message the builder placed (classic mode's ``summary``) is a section too; the system prompt (first
    message, no row) is not."""
    out: list[Section] = []
    claimed: set[int] = set()
    for row in decision.decisions:
        for pos in (row.position, row.anchor_position):
            if pos is not None:
                claimed.add(pos)
        if row.source not in ("section", "pin") or row.position is None or row.outcome == "dropped":
            continue
        text = layout[row.position].content
        name = row.section or row.source
        out.append(Section(name=f"pin:{name}" if row.source == "pin" else name, text=text,
                           tokens=row.token_count_after, sent=text in sent))
    for i, m in enumerate(layout):
        if i == 0 or i in claimed or m.role != "system" or m.name == RECALLED_NAME or not m.content:
            continue
        tokens = count(m) if count is not None else 0
        out.append(Section(name=m.name or "system", text=m.content, tokens=tokens, sent=m.content in sent))
    return out


class Holder:
    """Stemmed views of a text, to ask quickly whether it holds a sentence (:data:`HOLD` of its content words)."""

    def __init__(self, blocks: list[tuple[str, str]]) -> None:
        """``blocks``: (name, text) pairs."""
        self.all: set[str] = set()
        self.lines: list[tuple[str, set[str]]] = []
        for name, text in blocks:
            for line in text.splitlines():
                words = set(stems(line))
                if words:
                    self.lines.append((name, words))
                    self.all |= words

    def held(self, sentence: str, unit: str = "text") -> bool:
        return self.where(sentence, unit) is not None

    def where(self, sentence: str, unit: str = "line") -> str | None:
        """The name of the block that holds ``sentence`` (``"*"`` for the whole text), or None."""
        want = set(stems(sentence))
        if not want:
            return None
        need = HOLD * len(want)
        if unit == "text":
            return "*" if len(want & self.all) >= need else None
        for name, words in self.lines:
            if len(want & words) >= need:
                return name
        return None


# ---- driving one chat -------------------------------------------------------------------------------------

@dataclass
class Tally:
    """What one mode at one budget gave over a file's chats."""

    deps: dict[str, list[tuple[bool, bool, bool]]] = field(default_factory=lambda: defaultdict(list))
    """Per kind: (held by the sections' text, held by one line of them, held by one line of the prompt)."""
    live: dict[str, list[tuple[bool, bool, bool]]] = field(default_factory=lambda: defaultdict(list))
    """The same for every item in force at every probe."""
    by_section: Counter[str] = field(default_factory=Counter)
    """Which section held a dependency (one line)."""
    control: list[tuple[bool, bool]] = field(default_factory=list)
    """Never-said items at every probe: (held by the sections' text, by one line of them)."""
    superseded_line: list[bool] = field(default_factory=list)
    superseded_text: list[bool] = field(default_factory=list)
    traps: dict[str, list[bool]] = field(default_factory=lambda: defaultdict(list))
    trap_sections: Counter[str] = field(default_factory=Counter)
    share: list[float] = field(default_factory=list)
    standing_share: list[float] = field(default_factory=list)
    """The ``standing`` section's tokens over ``B`` at each probe (0 when it is not there)."""
    standing_shortened: int = 0
    """Probes whose decision notes say the standing section shortened items to fit its share."""
    present: Counter[str] = field(default_factory=Counter)
    prompt_tokens: list[int] = field(default_factory=list)
    probes: int = 0


def exchanges(chat: dict[str, Any]) -> list[tuple[str, str]]:
    turns = chat["turns"]
    return [(turns[i]["content"], turns[i + 1]["content"]) for i in range(0, len(turns), 2)]


async def drive(chat: dict[str, Any], *, engine: bool, budget: int, tally: Tally,
                details: list[dict[str, Any]] | None = None,
                before_turn: Callable[[Any, int], None] | None = None, controls: Sequence[str] = (),
                embeddings: str = "auto", vectors: Path | None = None,
                settings: dict[str, Any] | None = None) -> None:
    """Send ``chat`` turn by turn through a new session and measure each probe into ``tally`` (and one row per
    probe into ``details``). ``before_turn(session, turn)``, when given, is called before each turn is sent
    (tests and experiments: pin something, add a constraint by hand, ...). ``controls``: sentences never said in
    this chat, measured at each probe as a control (:func:`never_said`). ``settings``: other ``RuntimeConfig``
    fields (experiments, ``--set``)."""
    pairs = exchanges(chat)
    replies = iter([r for _, r in pairs])

    def answer(request: LLMRequest) -> LLMResponse:
        first = request.messages[0].content if request.messages else ""
        text = SUMMARY if first.startswith("Summarise the conversation") else next(replies, "OK.")
        return LLMResponse(message=Message(role="assistant", content=text),
                           usage=Usage(input_tokens=1, output_tokens=1))

    provider = FunctionProvider(answer, keep_requests=1)
    items = {r["id"]: r for r in chat["items"]}
    probes = {p["turn"]: p for p in chat["probes"]}
    last_probe = max(probes)
    with tempfile.TemporaryDirectory() as tmp:
        if vectors is not None:  # the vectors computed by earlier runs (a session keeps them beside its trace)
            vectors.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / "embeddings").symlink_to(vectors.resolve(), target_is_directory=True)
        config = RuntimeConfig(trace_dir=tmp, context_engine=engine, total_window=budget + RESERVE,
                               response_reserve=RESERVE, embeddings=embeddings, **(settings or {}))
        async with Runtime(config=config, provider=provider).chat() as session:
            for k, (user, _) in enumerate(pairs):
                turn = k + 1
                if before_turn is not None:
                    before_turn(session, turn)
                reply = await session.send(user)
                probe = probes.get(turn)
                if probe is None:
                    continue
                assert reply.turn == turn and reply.decision is not None
                request = provider.requests[-1]
                sent = "\n".join(m.content for m in request.messages)
                layout = session.sent_messages[(reply.turn, 0)]
                found = [s for s in runtime_sections(reply.decision, layout, sent, session.counter.count_message)
                         if s.sent]
                sections = Holder([(s.name, s.text) for s in found])
                prompt = Holder([(m.name or m.role, m.content) for m in request.messages])
                tally.probes += 1
                tally.share.append(sum(s.tokens for s in found) / budget)
                tally.standing_share.append(sum(s.tokens for s in found if s.name == "standing") / budget)
                tally.standing_shortened += any(n.startswith("standing:") for n in reply.decision.notes)
                tally.present.update({s.name.split(":")[0] for s in found})
                tally.prompt_tokens.append(session.counter.count_prompt(request.messages, request.tools))

                def measure(rec: dict[str, Any], sections: Holder = sections,
                            prompt: Holder = prompt) -> tuple[bool, bool, bool]:
                    return (sections.held(rec["sentence"], "text"), sections.held(rec["sentence"], "line"),
                            prompt.held(rec["sentence"], "line"))

                row: dict[str, Any] = {"chat": chat["id"], "probe": probe["id"], "turn": turn, "budget": budget,
                                       "mode": "default" if engine else "classic",
                                       "sections": {s.name: s.tokens for s in found}, "depends_on": {},
                                       "must_not_hold": {}}
                for d in probe["depends_on"]:
                    rec = items[d]
                    m = measure(rec)
                    tally.deps[rec["kind"]].append(m)
                    where = sections.where(rec["sentence"], "line")
                    if where is not None:
                        tally.by_section[where.split(":")[0]] += 1
                    row["depends_on"][d] = {"kind": rec["kind"], "text": m[0], "line": m[1], "prompt": m[2],
                                            "section": where}
                for rec in chat["items"]:
                    live = rec["turn"] < turn and (rec["superseded_at"] or 10**9) > turn and \
                        (rec["revoked_at"] or 10**9) > turn
                    if live:
                        tally.live[rec["kind"]].append(measure(rec))
                tally.control += [(sections.held(c, "text"), sections.held(c, "line")) for c in controls]
                gone_line = [d for d in probe["must_not_hold"] if sections.held(items[d]["sentence"], "line")]
                gone_text = [d for d in probe["must_not_hold"] if sections.held(items[d]["sentence"], "text")]
                tally.superseded_line.append(bool(gone_line))
                tally.superseded_text.append(bool(gone_text))
                row["must_not_hold"] = {d: {"line": d in gone_line, "text": d in gone_text}
                                        for d in probe["must_not_hold"]}
                if turn == last_probe:
                    kept = []
                    for t in chat["traps"]:
                        if t["turn"] >= turn:
                            continue
                        where = sections.where(t["sentence"], "line")
                        tally.traps[t["kind"]].append(where is not None)
                        if where is not None:
                            tally.trap_sections[where.split(":")[0]] += 1
                            kept.append({"sentence": t["sentence"], "kind": t["kind"], "section": where})
                    row["traps_kept"] = kept
                if details is not None:
                    details.append(row)


@dataclass
class RecogniserTally:
    """What the recogniser made of a file's user messages (see the module docstring)."""

    items: Counter[str] = field(default_factory=Counter)
    found: Counter[str] = field(default_factory=Counter)
    revisions: int = 0
    revisions_linked: int = 0
    revocations: int = 0
    revocations_applied: int = 0
    traps: Counter[str] = field(default_factory=Counter)
    traps_kept: Counter[str] = field(default_factory=Counter)
    kept_examples: list[str] = field(default_factory=list)
    sentences: int = 0
    other_kept: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    """The items not recognised, and the changes not applied (``--recogniser --verbose``)."""


def recogniser_tally(chats: list[dict[str, Any]], embeddings: str = "auto",
                     vectors: Path | None = None) -> RecogniserTally:
    """Every user message given, in order, to a bare engine; its standing objects against the data. With
    ``embeddings`` other than ``off``, the engine has the learned reader a session with the bundled embedding
    model gets (:mod:`arcana_jupyter.adaptive.standing_model`)."""
    from arcana_jupyter.adaptive.engine import AdaptiveEngine
    from arcana_jupyter.adaptive.standing import sentences
    from arcana_jupyter.adaptive.standing_model import standing_model
    from arcana_jupyter.context.embeddings import EmbeddingStore, embedder_from_setting

    embedder, _ = embedder_from_setting(embeddings)
    store = EmbeddingStore(embedder, vectors) if embedder is not None else None
    out = RecogniserTally()
    for chat in chats:
        engine = AdaptiveEngine()
        if store is not None:
            engine.standing_reader = standing_model(store.get, store.ident)
        for k, (user, reply) in enumerate(exchanges(chat)):
            engine.begin_turn(k + 1, user)
            # what the runtime's end of turn adds: the sentence the reply takes up as lasting
            engine.acknowledged_standing(k + 1, [{"role": "user", "content": user},
                                                 {"role": "assistant", "content": reply}])
            out.sentences += len(sentences(user))
        made = engine.audit_objects()
        by_text = {o.payload: o for o in made if o.standing is not None}
        item_of: dict[str, Any] = {}
        for rec in chat["items"]:
            out.items[rec["kind"]] += 1
            obj = next((o for t, o in by_text.items() if rec["sentence"] in t or t in rec["sentence"]), None)
            if obj is not None:
                out.found[rec["kind"]] += 1
                item_of[rec["id"]] = obj
            else:
                out.missed.append(f"item ({rec['kind']}): {rec['sentence']}")
        for rec in chat["items"]:
            if rec["revises"]:
                out.revisions += 1
                new, old = item_of.get(rec["id"]), item_of.get(rec["revises"])
                linked = bool(new and old and new.revises == old.id and old.retracted)
                out.revisions_linked += linked
                if not linked and new and old:
                    out.missed.append(f"revision not linked: {rec['sentence']}")
            if rec["revoked_by"]:
                out.revocations += 1
                obj = item_of.get(rec["id"])
                applied = bool(obj and obj.retracted and obj.retracted_turn == rec["revoked_at"])
                out.revocations_applied += applied
                if not applied and obj is not None:
                    out.missed.append(f"revocation not applied: {rec['revoked_by']}")
        said = {rec["sentence"] for rec in chat["items"]}
        traps = [t for t in chat["traps"] if t["role"] == "user"]
        for t in traps:
            out.traps[t["kind"]] += 1
            kept = [o for txt, o in by_text.items() if t["sentence"] in txt or txt in t["sentence"]]
            if kept:
                out.traps_kept[t["kind"]] += 1
                out.kept_examples.append(t["sentence"])
        for txt in by_text:
            if not any(txt in x or x in txt for x in said) and not any(txt in t["sentence"] for t in traps):
                out.other_kept.append(txt)
    return out


def recogniser_table(r: RecogniserTally) -> str:
    items = sum(r.items.values())
    found = sum(r.found.values())
    made = found + sum(r.traps_kept.values()) + len(r.other_kept)
    by_kind = ", ".join(f"{k} {r.found[k]}/{r.items[k]}" for k in KINDS)
    traps = ", ".join(f"{k} {r.traps_kept[k]}/{n}" for k, n in sorted(r.traps.items()))
    other = "; ".join(f"“{t}”" for t in r.other_kept[:5]) or "none"
    return f"""The recogniser alone (adaptive/standing.py, through the engine's `begin_turn` and its end of turn's \
reading of the reply), over every user message:

| items recognised | revisions linked to what they revise | revocations applied | traps kept as standing | \
other user sentences kept as standing | precision (items among what was kept) |
| --- | ---: | ---: | --- | --- | ---: |
| {found}/{items} ({by_kind}) | {r.revisions_linked}/{r.revisions} | {r.revocations_applied}/{r.revocations} | \
{sum(r.traps_kept.values())}/{sum(r.traps.values())} ({traps}) | {len(r.other_kept)} of {r.sentences} sentences \
({other}) | {found / made if made else 1:.2f} |
"""


def never_said(chats: list[dict[str, Any]], chat: dict[str, Any]) -> list[str]:
    """The item sentences of ``chats`` whose key ``chat`` never states (in any wording): the chance control."""
    keys = {r["key"] for r in chat["items"]}
    return sorted({r["sentence"] for c in chats for r in c["items"] if r["key"] not in keys})


# ---- the report --------------------------------------------------------------------------------------------

def rate(values: list[bool]) -> str:
    return f"{sum(values) / len(values):.2f}" if values else "-"


def column(rows: dict[str, list[tuple[bool, bool, bool]]], kind: str | None, i: int) -> str:
    values = [m[i] for k, ms in rows.items() if kind in (None, k) for m in ms]
    return rate(values)


def tables(results: list[tuple[int, str, Tally]]) -> str:
    head = ("| budget B | mode | instructions | preferences | constraints | all | all, one line | "
            "all, anywhere in the prompt |\n| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    deps, live, other = [head], [head], []
    for budget, mode, t in results:
        for out, rows in ((deps, t.deps), (live, t.live)):
            n = {k: len(rows.get(k, [])) for k in KINDS}
            cells = " | ".join(f"{column(rows, k, 0)} (of {n[k]})" for k in KINDS)
            out.append(f"| {budget:,} | {mode} | {cells} | {column(rows, None, 0)} | {column(rows, None, 1)} | "
                       f"{column(rows, None, 2)} |")
        traps = [v for vs in t.traps.values() for v in vs]
        by_kind = ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in sorted(t.traps.items()))
        present = ", ".join(f"{name} {n / t.probes:.0%}" for name, n in t.present.most_common()) or "none"
        holders = ", ".join(f"{name} {n}" for name, n in t.by_section.most_common()) or "none"
        other.append(
            f"| {budget:,} | {mode} | {rate([c[0] for c in t.control])} / {rate([c[1] for c in t.control])} | "
            f"{rate(t.superseded_line)} ({rate(t.superseded_text)}) | "
            f"{sum(traps)} of {len(traps)} ({by_kind}) | "
            f"{statistics.fmean(t.share):.0%} / {max(t.share):.0%} | "
            f"{statistics.fmean(t.standing_share):.1%} / {max(t.standing_share):.1%} ({t.standing_shortened}) | "
            f"{statistics.fmean(t.prompt_tokens):,.0f} | {present} | {holders} |")
    return f"""Held by the runtime's sections (the issue's measure: at least 60% of the sentence's content words in
the sections' text), per probe and item it depends on:

{chr(10).join(deps)}

Every item in force at every probe (not only the ones the probe was written for):

{chr(10).join(live)}

| budget B | mode | chance: never-said items held, text / one line | superseded held, one line (whole text) | \
chit-chat kept at the last probe (by kind) | sections' share of B, mean / max | the standing section's share of B, \
mean / max (probes it shortened) | prompt tokens | sections present (share of probes) | held by (one line) |
| ---: | --- | ---: | ---: | --- | ---: | ---: | ---: | --- | --- |
{chr(10).join(other)}
"""


NOISE_PLAIN = ("Sure.", "Got it.", "Will do.", "Okay!")
NOISE_LASTING = ("Noted.", "Noted, thanks.", "Understood, I'll keep that in mind.")


def with_ack_noise(chats: list[dict[str, Any]], plain: float = 0.3, lasting: float = 0.1,
                   seed: int = 7, style: str = "as-written") -> list[dict[str, Any]]:
    """The chats with acknowledgements opening the assistant's replies to ordinary turns too (``--ack-noise``): a
    bare one ("Sure.", "Will do.") on ``plain`` of them and a lasting-sounding one ("Noted.") on ``lasting``,
    drawn with ``seed``. Our generated chats acknowledge only the turns that state an item, which a real assistant
    does not keep to: what the recogniser keeps then (the runtime's end of turn reads the reply's opening,
    :func:`arcana_jupyter.adaptive.standing.acknowledged`) is the false-positive cost of reading it."""
    rng = random.Random(seed)
    out = copy.deepcopy(chats)
    for chat in out:
        stating = {rec["message"] for rec in chat["items"]}
        turns = chat["turns"]
        for user, reply in itertools.pairwise(turns):
            if user["role"] != "user" or reply["role"] != "assistant" or user["id"] in stating:
                continue
            x = rng.random()
            if style in ACKS:
                if x < lasting + plain:
                    reply["content"] = f"{rng.choice(ACKS[style]['ordinary'])} {reply['content']}"
            elif x < lasting:
                reply["content"] = f"{rng.choice(NOISE_LASTING)} {reply['content']}"
            elif x < lasting + plain:
                reply["content"] = f"{rng.choice(NOISE_PLAIN)} {reply['content']}"
    return out


ACKS: dict[str, dict[str, tuple[str, ...]]] = {
    "dev": {
        "lasting": ("Got it! I'll keep that in mind going forward.",
                    "Absolutely \u2014 I'll stick to that from here on out.",
                    "Understood. I'll follow that for the rest of our conversation.",
                    "Sounds good! I'll make sure to do that in all my future responses.",
                    "Noted! I'll apply that to everything from now on.",
                    "Of course. I'll keep to that in every answer.",
                    "Perfect, I'll remember that.",
                    "Thanks for letting me know \u2014 I'll adjust my answers accordingly from now on.",
                    "Makes sense. I'll do it that way moving forward.",
                    "Sure thing! I'll keep that up for the rest of the project.",
                    "Great, that's noted for all future replies.",
                    "Will do \u2014 consider it a standing rule."),
        "plain": ("Sure!", "Okay, no problem.", "Alright."),
        "revise": ("Got it \u2014 switching over now.", "Sure, I've updated that.",
                   "Makes sense, I'll change that going forward.", "Okay! Updating my approach from here on."),
        "ordinary": ("Sure! Here's how you can do it.", "Great question!", "Good catch.", "Absolutely.",
                     "Got it. Here's the updated version.", "Okay, let's look at that.", "Happy to help!",
                     "Good idea \u2014 I'll walk you through it.", "Sure, and I'll keep it short.",
                     "Understood. Let me know if anything else changes going forward."),
    },
    "test": {
        "lasting": ("You got it! I'll keep that in mind from now on.",
                    "Certainly \u2014 I'll follow that going forward.",
                    "Understood! I'll make sure all my future answers do that.",
                    "Of course! I'll stick with that for the rest of our work together.",
                    "Good call. I'll keep doing it that way.",
                    "Noted \u2014 I'll apply that to everything that follows.",
                    "Got it. I'll remember that for the rest of the session.",
                    "Thanks for the heads-up! I'll adjust accordingly going forward.",
                    "Absolutely, I'll keep that as the default from here on.",
                    "Sure thing, that's how I'll do it from now on.",
                    "Makes sense \u2014 I'll use that from this point forward.",
                    "Okay! I'll stick to that."),
        "plain": ("Sure thing.", "No problem!", "Of course."),
        "revise": ("Understood \u2014 I'll make that change from now on.", "No problem, switching to that.",
                   "Sounds good; updated.", "Of course! The new version replaces the earlier one."),
        "ordinary": ("Of course! Here's a version that works.", "Good question.", "Nice catch!", "Certainly.",
                     "Got it \u2014 here's the revised code.", "Sure, let's dig in.", "Glad to help.",
                     "Good thinking. Here's a sketch.", "Okay, I'll keep this one brief.",
                     "Understood; from here the next step is the migration."),
    },
}
"""Acknowledgements as chat models write them (``--acks dev`` / ``--acks test``, two pools that share no phrasing:
tune on dev, report test). Our generated chats open the reply to each item turn with one of a few fixed forms; a
real assistant says it its own way, often after an interjection ("Got it! I'll keep that in mind going
forward."), sometimes barely ("Sure!"), and opens ordinary answers in the same words ("Got it. Here's the updated
version."). ``lasting`` and ``plain`` replace the opening of the replies to item turns (lasting three times in
four), ``revise`` and ``plain`` those to revisions; ``ordinary`` opens replies to other turns under
``--ack-noise``."""


def with_acks(chats: list[dict[str, Any]], style: str, seed: int = 11) -> list[dict[str, Any]]:
    """The chats with the replies to item turns opened another way (``--acks``): ``none`` drops their
    acknowledgement (a model that just answers), ``dev`` / ``test`` put one drawn from :data:`ACKS` in its place;
    ``as-written`` leaves them. Only an opening :func:`~arcana_jupyter.adaptive.standing.acknowledgement` reads
    as one in the generated data is replaced; the rest of the reply stays."""
    from arcana_jupyter.adaptive.standing import acknowledgement

    if style == "as-written":
        return chats
    rng = random.Random(seed)
    out = copy.deepcopy(chats)
    for chat in out:
        stating = {rec["message"]: bool(rec["revises"]) for rec in chat["items"]}
        for user, reply in itertools.pairwise(chat["turns"]):
            if user["role"] != "user" or reply["role"] != "assistant" or user["id"] not in stating:
                continue
            text = reply["content"]
            if acknowledgement(text) is not None:
                text = re.split(r"(?<=[.!?])\s+|\n", text.strip(), maxsplit=1)[1:] or [""]
                text = text[0]
            if style != "none":
                pool = ACKS[style]
                lasting = pool["revise"] if stating[user["id"]] else pool["lasting"]
                opening = rng.choice(lasting if rng.random() < 0.75 else pool["plain"])
                text = f"{opening} {text}".strip()
            reply["content"] = text
    return out


def openings_table(data: dict[str, list[str]]) -> str:
    """How :func:`~arcana_jupyter.adaptive.standing.acknowledgement` reads each class of reply openings
    (``--openings``): acknowledgements of something lasting should read ``lasting``, ordinary openings nothing (a
    bare ``plain`` only lets a sentence the learned reader rates at 0.75 or more be taken up)."""
    from arcana_jupyter.adaptive.standing import acknowledgement

    rows = ["| openings | n | read as lasting | as bare | as nothing |", "| --- | ---: | ---: | ---: | ---: |"]
    for kind in ("lasting", "ordinary"):
        got = Counter(acknowledgement(o) for o in data.get(kind, []))
        rows.append(f"| {kind} | {len(data.get(kind, []))} | {got['lasting']} | {got['plain']} | {got[None]} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    parser.add_argument("--budgets", default="4000,16000")
    parser.add_argument("--modes", default="default,classic")
    parser.add_argument("--limit", type=int, default=None, help="first N chats of each file")
    parser.add_argument("--details", type=Path, default=None, help="write one JSON line per probe here")
    parser.add_argument("--out", default=str(Path(__file__).parents[1] / "results" / "standing.md"))
    parser.add_argument("--recogniser", action="store_true",
                        help="print the recogniser-alone table of each file and stop (no sessions, seconds)")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="with --recogniser: list what it missed and what else it kept")
    parser.add_argument("--ack-noise", action="store_true",
                        help="with --recogniser: acknowledgements also open 30%% (bare) and 10%% (\"Noted.\") of the "
                             "replies to ordinary turns (what the reply-reading costs in false positives)")
    parser.add_argument("--acks", default="as-written", choices=("as-written", "none", "dev", "test"),
                        help="how the replies to item turns open: as written, with no acknowledgement, or in a chat "
                             "model's own words from the dev or test pool (ACKS); with --ack-noise, that pool's "
                             "ordinary openings too")
    parser.add_argument("--embeddings", default="auto", choices=("auto", "on", "off"),
                        help="RuntimeConfig.embeddings (default: auto, as Runtime() starts; off: the rules alone)")
    parser.add_argument("--vectors", type=Path, default=Path(os.environ.get("ARCANA_BENCH_VECTORS", ".bench-vectors")),
                        help="where sessions keep the vectors they compute, shared by every run")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=JSON",
                        help="another RuntimeConfig setting for every session (experiments: standing_share=0.15)")
    parser.add_argument("--openings", type=Path, default=None,
                        help="only: how the reply-reading reads a file of reply openings ({\"lasting\": [...], "
                             "\"ordinary\": [...]}, e.g. data/reply_openings.json), and stop")
    args = parser.parse_args(argv)
    if args.openings is not None:
        print(openings_table(json.loads(args.openings.read_text(encoding="utf-8"))))
        return
    if args.recogniser:
        for path in args.files:
            chats = json.loads(path.read_text(encoding="utf-8"))[: args.limit]
            chats = with_acks(chats, args.acks)
            if args.ack_noise:
                chats = with_ack_noise(chats, style=args.acks)
            tally = recogniser_tally(chats, args.embeddings, args.vectors)
            print(f"## {path.name}\n\n{recogniser_table(tally)}", flush=True)
            if args.verbose:
                print("\n".join(f"- {m}" for m in [*dict.fromkeys(tally.missed),
                                                    *(f"trap kept: {t}" for t in tally.kept_examples),
                                                    *(f"other kept: {t}" for t in tally.other_kept)]))
        return
    budgets = [int(b) for b in args.budgets.split(",")]
    modes = args.modes.split(",")
    settings = {k: json.loads(v) for k, _, v in (c.partition("=") for c in args.set)}
    load = os.getloadavg()[0]
    details: list[dict[str, Any]] | None = [] if args.details else None
    parts = []
    for path in args.files:
        chats = with_acks(json.loads(path.read_text(encoding="utf-8"))[: args.limit], args.acks)
        results: list[tuple[int, str, Tally]] = []
        for budget in budgets:
            for mode in modes:
                tally = Tally()
                for chat in chats:
                    asyncio.run(drive(chat, engine=mode == "default", budget=budget, tally=tally, details=details,
                                      controls=never_said(chats, chat), embeddings=args.embeddings,
                                      vectors=args.vectors, settings=settings))
                results.append((budget, mode, tally))
                print(path.name, budget, mode, {k: column(tally.deps, k, 0) for k in KINDS},
                      "superseded", rate(tally.superseded_line), flush=True)
        n_x = sum(len(c["turns"]) // 2 for c in chats)
        n_p = sum(len(c["probes"]) for c in chats)
        n_i = Counter(r["kind"] for c in chats for r in c["items"])
        name = path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path
        parts.append(f"""## {name}

{len(chats)} chats, {n_x} exchanges, {n_p} probes; items stated: {n_i['instruction']} instructions, \
{n_i['preference']} preferences, {n_i['constraint']} constraints (revisions included).

{tables(results)}
{recogniser_table(recogniser_tally(chats, args.embeddings, args.vectors))}""")
    if details is not None:
        args.details.write_text("".join(json.dumps(d) + "\n" for d in details), encoding="utf-8")
    files = " ".join(str(f.relative_to(Path.cwd()) if f.is_relative_to(Path.cwd()) else f) for f in args.files)
    command = " ".join(["python -m benchmarks.retention.standing", files, "--budgets", args.budgets,
                        *(["--modes", args.modes] if args.modes != "default,classic" else []),
                        *(["--limit", str(args.limit)] if args.limit else []),
                        *(["--acks", args.acks] if args.acks != "as-written" else []),
                        *(["--embeddings", args.embeddings] if args.embeddings != "auto" else []),
                        *(f"--set '{c}'" for c in args.set)])
    relevance = ("lexical relevance (`--embeddings off`: the standing rules alone)" if args.embeddings == "off"
                 else "relevance `embeddings=auto` (the bundled embedding model; the standing rules with their "
                      "learned reader)")
    text = f"""# Standing instructions and preferences in later prompts: the default mode beside classic

Command: `{command}`
Date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}; machine: {os.cpu_count()} cores, {cpu_model()}, \
Python {platform.python_version()}; load average at start {load:.2f}

Sessions started as `Runtime()` starts them (the default mode, every default setting) and in classic mode
beside it; `total_window = B + 1000`, `response_reserve = 1000`, {relevance}; the recorded assistant
replies as the model's. Measured at each probe on the prompt as sent. "Sections": the blocks the runtime wrote
itself (decision rows with `source == "section"` or `"pin"`, and classic mode's summary), never a history
message or a recalled one; "held": at least 60% of the sentence's stemmed content words, in the sections' text
(the issue's measure) or in one line. See the module docstring of `benchmarks/retention/standing.py` for every
column, and `benchmarks/retention/make_standing.py` for the data.

{chr(10).join(parts)}"""
    if args.out == "-":
        sys.stdout.write(text)
        return
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
