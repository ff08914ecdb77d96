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
from ..context.sections import CHECKPOINT_SECTION, ContextSection
from .checkpoint import SECTION_CLAIMS, SessionCheckpoint, checkpoint_sections
from .ledger import EngineState
from .state import KINDS, StateObject

SECTION_ACTIVE = "adaptive_active"
SECTION_SOFT = "adaptive_soft"
SECTION_HARD = "adaptive_hard"
SECTION_DIGESTS = "turn_digests"
"""The section of the latest per-turn summaries in full (its name is in traces: it stays)."""
SECTION_NAMES = (SECTION_HARD, SECTION_SOFT, CHECKPOINT_SECTION, SECTION_CLAIMS, SECTION_DIGESTS, SECTION_ACTIVE)


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

    def sections(self, turn: int | None = None) -> list[ContextSection]:
        """The tier sections: anchors and stubs (head), active objects in full (late).

        What stands in for turns that did not fit is :meth:`overflow_sections`, asked for by the
        runtime only when the builder could not keep every turn verbatim. ``turn`` is accepted for
        symmetry with the capability hook; tiers are the engine's current state."""
        live = self.objects()
        out: list[ContextSection] = []
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

    def checkpoint_sections(self) -> list[ContextSection]:
        """The whole session's checkpoint as sections (``checkpoint``, ``model_claims``): what the
        inspector shows. The prompt gets the checkpoint of the turns that did not fit instead
        (:meth:`overflow_sections`)."""
        return checkpoint_sections(self.checkpoint, self.config.narrative_lines, placement="head")

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
            for section in checkpoint_sections(checkpoint, narrative_lines, placement="head"):
                if section.name == SECTION_CLAIMS and not claims:
                    continue
                out.append(section)
                carries[section.name] = list(summarised)
        if detailed:
            span = f"turn {detailed[0]}" if len(detailed) == 1 else f"turns {detailed[0]}–{detailed[-1]}"
            lines = [f"Earlier {span}, not in this prompt verbatim, as digests"
                     + ("; search_turn_events(query) finds more):" if self.tools_offered else "):")]
            lines += [self.turn_summaries[t].render() for t in detailed]
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
    "SECTION_ACTIVE", "SECTION_DIGESTS", "SECTION_HARD", "SECTION_NAMES", "SECTION_SOFT", "PromptRendering",
]
