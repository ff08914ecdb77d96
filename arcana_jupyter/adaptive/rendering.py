"""The engine's state as prompt sections: tiers, the whole checkpoint, and the cover for turns that did not fit.

:meth:`PromptRendering.sections` gives the tier sections (hard anchors and soft stubs in the head,
active objects in full late); :meth:`PromptRendering.overflow_sections` what stands in for the
turns the builder could not keep verbatim (a checkpoint folded over their per-turn summaries and
the latest of those summaries in full), bounded by a token budget. Rendering reads the state and
never changes it; its caches are keyed by the objects and turns they render.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any

from ..context.bands import OverflowCover
from ..context.sections import CHECKPOINT_SECTION, STANDING_SECTION, ContextSection
from .checkpoint import SECTION_CLAIMS, SessionCheckpoint, checkpoint_sections
from .ledger import EngineState
from .standing import shorten
from .state import KINDS, StateObject

SECTION_ACTIVE = "adaptive_active"
SECTION_SOFT = "adaptive_soft"
SECTION_HARD = "adaptive_hard"
SECTION_DIGESTS = "turn_digests"
"""The section of the latest per-turn summaries in full (its name is in traces: it stays)."""
SECTION_NAMES = (STANDING_SECTION, SECTION_HARD, SECTION_SOFT, CHECKPOINT_SECTION, SECTION_CLAIMS, SECTION_DIGESTS,
                 SECTION_ACTIVE)
STANDING_HEADING = "Standing instructions (the user's own words; each holds until the user changes it):"
MIN_STANDING_TOKENS = 48
"""The standing section's share is never less than this (a tiny window still gets its heading and a line)."""
CUT_WORDS = 8
"""The second step of shortening: an item's first words."""


class PromptRendering(EngineState):
    """The prompt sections of the engine's state (see the module docstring)."""

    def _reset(self) -> None:
        super()._reset()
        self._full_cache: dict[str, tuple[StateObject, str]] = {}
        self._stub_cache: dict[str, tuple[StateObject, str]] = {}
        self._overflow_cache: dict[tuple[Any, ...], OverflowCover] = {}
        # the checkpoint folded over the turns last summarised (and their summaries): the next cover
        # usually summarises those plus the turns that just left the verbatim window
        self._folded: list[tuple[tuple[int, ...], list[Any], SessionCheckpoint]] = []
        self._standing_cache: dict[tuple[Any, ...], tuple[ContextSection, dict[str, str]]] = {}
        self.standing_shown: dict[str, str] = {}
        """How the last standing section showed each live standing object: ``full``, ``short`` (its
        first clause), ``cut`` (its first words) or ``folded`` (named by id only)."""

    def _full(self, obj: StateObject) -> str:
        hit = self._full_cache.get(obj.id)
        if hit is None or hit[0] is not obj:
            hit = (obj, obj.render_full())
            self._full_cache[obj.id] = hit
        return hit[1]

    def _stub(self, obj: StateObject) -> str:
        hit = self._stub_cache.get(obj.id)
        if hit is None or hit[0] is not obj:
            hit = (obj, obj.render_stub())
            self._stub_cache[obj.id] = hit
        return hit[1]

    def sections(self, turn: int | None = None, available: int | None = None) -> list[ContextSection]:
        """The standing instructions (head, first), then the tier sections: anchors and stubs (head),
        active objects in full (late). Standing objects are in their own section only.

        What stands in for turns that did not fit is :meth:`overflow_sections`, asked for by the
        runtime only when the builder could not keep every turn verbatim. ``turn`` is accepted for
        symmetry with the capability hook; tiers are the engine's current state. ``available``: the
        call's prompt budget, which bounds the standing section (:meth:`standing_section`)."""
        out: list[ContextSection] = []
        standing = self.standing_section(available)
        if standing is not None:
            out.append(standing)
        live = [o for o in self.objects() if o.standing is None]
        hard = [o for o in live if o.tier == "hard"]
        if hard:
            groups: dict[str, list[str]] = {}
            for o in hard:
                groups.setdefault(o.kind, []).append(o.id)
            listing = "; ".join(f"{k}s: {', '.join(groups[k])}" for k in KINDS if k in groups)
            out.append(
                ContextSection(
                    name=SECTION_HARD,
                    content=(
                        "Archived working memory (anchors only — id and kind). "
                        f"{listing}.\n"
                        + (f"To see one in full, call hydrate(id), e.g. hydrate(\"{hard[0].id}\"); "
                           "mentioning its subject also brings it back." if self.tools_offered
                           else "Mentioning its subject brings it back.")
                    ),
                    placement="head",
                )
            )
        soft = [o for o in live if o.tier == "soft"]
        if soft:
            lines = "\n".join("- " + self._stub(o) for o in soft)
            out.append(
                ContextSection(
                    name=SECTION_SOFT,
                    content=("Peripheral working memory (one-line stubs; hydrate(id) shows the full text):\n"
                             if self.tools_offered else "Peripheral working memory (one-line stubs):\n") + lines,
                    placement="head",
                )
            )
        active = sorted((o for o in live if o.tier == "active"), key=lambda o: not o.focused)  # live is in id order
        if active:
            body = "\n".join(self._full(o) for o in active)
            out.append(
                ContextSection(
                    name=SECTION_ACTIVE,
                    content=(
                        "Active working memory (full text; keep it current with update_task, decide, "
                        "add_constraint, note, focus and retract_task):\n" + body
                    ),
                    placement="late",
                )
            )
        return out

    def standing_section(self, available: int | None = None) -> ContextSection | None:
        """The live standing instructions, preferences and constraints in the user's words, one line
        each with the turn it was given (and its id when the model has the tools): the ``standing``
        section, protected, placed first in the head — it changes only when an instruction does.

        With ``available`` (the call's prompt budget) it takes at most ``standing_share`` of it (never
        less than :data:`MIN_STANDING_TOKENS`): when the items do not fit, the oldest revisable ones
        (recognised in the user's messages or the model's; then the ones the user added by hand) are
        shortened one at a time to their first clause (:func:`.standing.shorten`), then to their first
        :data:`CUT_WORDS` words, then named by id in a last line (and what that frees goes back to the
        newest) — never dropped silently: the section's ``note`` says which, and :attr:`standing_shown`
        how each was shown."""
        live = self.standing()
        if not live:
            self.standing_shown = {}
            return None
        cap = None
        if available is not None:
            cap = max(MIN_STANDING_TOKENS, int(available * self.config.standing_share))
        key = (tuple((o.id, o.payload, o.origin, o.created_turn) for o in live), cap, self.tools_offered)
        hit = self._standing_cache.get(key)
        if hit is None:
            hit = self._fit_standing(live, cap, available)
            if len(self._standing_cache) > 32:
                self._standing_cache.clear()
            self._standing_cache[key] = hit
        self.standing_shown = dict(hit[1])
        return hit[0]

    def _standing_text(self, live: list[StateObject], shown: dict[str, str]) -> str:
        lines = [STANDING_HEADING]
        folded: list[str] = []
        for o in live:
            how = shown[o.id]
            if how == "folded":
                folded.append(o.id)
                continue
            text = " ".join(o.payload.split())
            if how == "short":
                text = shorten(text)
            elif how == "cut":
                text = shorten(text, CUT_WORDS)
            ref = f"{o.id}, turn {o.created_turn}" if self.tools_offered else f"turn {o.created_turn}"
            who = ", the model's" if o.origin == "model" else ""
            why = f" (why: {' '.join(o.rationale.split())})" if o.rationale and how == "full" else ""
            lines.append(f"- ({ref}{who}) {text}{why}")
        if folded:
            lines.append(f"- (+{len(folded)} older, not shown to fit the budget: {', '.join(folded)})")
        return "\n".join(lines)

    def _fit_standing(self, live: list[StateObject], cap: int | None, available: int | None
                      ) -> tuple[ContextSection, dict[str, str]]:
        shown = {o.id: "full" for o in live}

        def section(note: str | None = None) -> ContextSection:
            return ContextSection(name=STANDING_SECTION, content=self._standing_text(live, shown), layer="task",
                                  placement="head", note=note)

        if cap is None or self.counter.count_message(section().render()) <= cap:
            return section(), shown
        order = [o for o in live if o.origin != "added"] + [o for o in live if o.origin == "added"]
        for step in ("short", "cut", "folded"):
            for o in order:
                if step == "short" and shorten(" ".join(o.payload.split())) == " ".join(o.payload.split()):
                    continue
                shown[o.id] = step
                if self.counter.count_message(section().render()) <= cap:
                    break
            else:
                continue
            break
        # what folding freed goes back to the newest first: each in full, or its first clause, if that fits
        for o in reversed(order):
            if shown[o.id] in ("short", "cut"):
                before = shown[o.id]
                for better in ("full", "short"):
                    if better == before:
                        break
                    shown[o.id] = better
                    if self.counter.count_message(section().render()) <= cap:
                        break
                    shown[o.id] = before
        changed = {how: [i for i, v in shown.items() if v == how] for how in ("short", "cut", "folded")}
        parts = [f"{len(ids)} {label} ({', '.join(ids)})" for how, label in
                 (("short", "shortened to their first clause"), ("cut", "cut to their first words"),
                  ("folded", "named by id only")) if (ids := changed[how])]
        share = f" ({self.config.standing_share:.0%} of {available})" if available is not None else ""
        note = (f"standing: {len(live)} standing instruction(s) take more than the section's share, {cap} tokens"
                f"{share}; oldest first, {'; '.join(parts)} — %arcana_standing list shows them in full")
        return section(note), shown

    def checkpoint_sections(self) -> list[ContextSection]:
        """The whole session's checkpoint as sections (``checkpoint``, ``model_claims``): what the
        inspector shows. The prompt gets the checkpoint of the turns that did not fit instead
        (:meth:`overflow_sections`)."""
        return checkpoint_sections(self.checkpoint, self.config.narrative_lines, placement="head",
                                   user_constraints=not self.config.standing_instructions)

    def overflow_sections(self, turns: Iterable[int], max_tokens: int | None = None) -> OverflowCover:
        """What stands in for ``turns``, the turns that did not reach the prompt verbatim.

        A checkpoint reconciled from their per-turn summaries (the most recent ``digest_turns`` of
        them excepted; the model's own claims apart, see checkpoint.py) and those recent ones as
        full summaries. Both are a function of which turns they cover, never of the question, so
        they change only when the builder's verbatim window moves (when the prompt's prefix changes
        anyway): they are placed in the head, where the provider's prompt cache keeps them.

        ``max_tokens`` bounds the cover (the runtime passes a share of the budget, and never more
        than the turns it replaces): the checkpoint shows fewer narrative lines, the model's claims
        go, then the summaries move into the checkpoint, until it fits — or, when even the smallest
        checkpoint is larger, no cover at all. Turns without a summary (not yet ended) are skipped."""
        covered = tuple(sorted({t for t in turns if t in self.turn_summaries}))
        if not covered:
            return OverflowCover()
        key = (covered, max_tokens)
        hit = self._overflow_cache.get(key)
        if hit is not None:
            return hit
        detail = min(self.config.digest_turns, len(covered))
        lines = self.config.narrative_lines
        claims = True
        while True:
            cover = self._cover(covered, detail, lines, claims)
            if max_tokens is None or self._cover_tokens(cover) <= max_tokens:
                break
            if lines > 0:
                lines //= 2
            elif claims:
                claims = False
            elif detail > 0:
                detail -= 1
            else:  # even the smallest checkpoint is larger than what it would stand in for
                cover = OverflowCover()
                break
        if len(self._overflow_cache) > 64:
            self._overflow_cache.clear()
        self._overflow_cache[key] = cover
        return cover

    def _cover(self, covered: tuple[int, ...], detail: int, narrative_lines: int, claims: bool) -> OverflowCover:
        detailed = covered[len(covered) - detail:] if detail else ()
        summarised = covered[: len(covered) - len(detailed)]
        out: list[ContextSection] = []
        carries: dict[str, list[int]] = {}
        if summarised:
            checkpoint = self._fold(summarised)
            for section in checkpoint_sections(checkpoint, narrative_lines, placement="head",
                                               user_constraints=not self.config.standing_instructions):
                if section.name == SECTION_CLAIMS and not claims:
                    continue
                out.append(section)
                carries[section.name] = list(summarised)
        if detailed:
            span = f"turn {detailed[0]}" if len(detailed) == 1 else f"turns {detailed[0]}–{detailed[-1]}"
            lines = [f"Earlier {span}, not in this prompt verbatim, as digests"
                     + ("; search_turn_events(query) finds more):" if self.tools_offered else "):")]
            lines += [self.turn_summaries[t].render(not self.config.standing_instructions) for t in detailed]
            out.append(ContextSection(name=SECTION_DIGESTS, content="\n".join(lines), placement="head"))
            carries[SECTION_DIGESTS] = list(detailed)
        return OverflowCover(sections=out, carries=carries)

    def _fold(self, turns: tuple[int, ...]) -> SessionCheckpoint:
        """``SessionCheckpoint()`` reconciled with the per-turn summaries of ``turns``, in order,
        continuing from the last fold when it covered a prefix of them with the same summaries:
        reconcile is a pure fold (it replaces its lists, never edits them), so a shallow copy carries
        on exactly. A cover then costs the turns that joined it, not every turn before them."""
        summaries = list(map(self.turn_summaries.__getitem__, turns))
        start, checkpoint = 0, None
        # the longest of the last few folds that is a prefix (a cover is tried at several sizes per call)
        for done, used, state in sorted(self._folded, key=lambda f: -len(f[0])):
            n = len(done)
            if n <= len(turns) and turns[:n] == done and all(map(operator.is_, used, summaries[:n])):
                start, checkpoint = n, state.model_copy()
                break
        if checkpoint is None:
            checkpoint = SessionCheckpoint()
        for summary in summaries[start:]:
            checkpoint.reconcile(summary)
        self._folded = [*[f for f in self._folded if f[0] != turns][-7:], (turns, summaries, checkpoint.model_copy())]
        return checkpoint

    def _cover_tokens(self, cover: OverflowCover) -> int:
        return sum(self.counter.count_message(s.render()) for s in cover.sections)

    def render_flat(self) -> str:
        """Every live object in full, as one block (what the prompt would hold without tiering)."""
        return "Working memory:\n" + "\n".join(self._full(o) for o in self.objects())


__all__ = [
    "CUT_WORDS", "MIN_STANDING_TOKENS", "SECTION_ACTIVE", "SECTION_DIGESTS", "SECTION_HARD", "SECTION_NAMES",
    "SECTION_SOFT", "STANDING_HEADING", "PromptRendering",
]
