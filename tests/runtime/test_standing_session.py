"""Standing instructions through a real ``Runtime()`` session and a scripted model: said once, in every
later prompt (a 1k window included), revised, taken back, kept across a resume, added by the model's
own tool, and shortened — with a note — when more than its share of the budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scripted_chat import call, events_of, say

from arcana_jupyter.adaptive.config import STANDING_SHARE
from arcana_jupyter.providers.base import LLMRequest, LLMResponse
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig

FILLER = ("Here is the next part of the inventory notes: the back room holds the frames, the wheels and the "
          "tubes, and the stock counts change every week. ") * 4


class Model:
    """Answers every request with a short reply and keeps the requests."""

    def __init__(self, *steps: LLMResponse) -> None:
        self.requests: list[LLMRequest] = []
        self.steps = list(steps)

    def __call__(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        return self.steps.pop(0) if self.steps else say("Noted.")

    def sent(self, i: int = -1) -> str:
        return "\n".join(m.content or "" for m in self.requests[i].messages)


def runtime(tmp_path: Path, model: Model, **config: Any) -> Runtime:
    cfg = RuntimeConfig(trace_dir=tmp_path / "traces", embeddings="off", **config)
    return Runtime(config=cfg, provider=FunctionProvider(model))


def standing_row(reply: Any) -> Any:
    [row] = [d for d in reply.decision.decisions if d.source == "section" and d.section == "standing"]
    return row


async def test_an_instruction_from_turn_3_is_in_the_prompt_at_turn_60_with_a_1k_window(tmp_path: Path) -> None:
    model = Model()
    async with runtime(tmp_path, model, total_window=1024).chat() as chat:
        await chat.send("Hi, I'm working on the bike shop's inventory API. Can't wait to get going.")
        await chat.send("What should the first table look like?")
        await chat.send("Answer in French from now on, I'm practising before the move to Lyon.")
        for turn in range(4, 61):
            reply = await chat.send(f"Turn {turn}. {FILLER}")
        assert reply.turn == 60
        sent = model.sent()
        assert "- (s_1, turn 3) Answer in French from now on, I'm practising before the move to Lyon." in sent
        # the turn itself is long gone from the window: the section holds it, protected, in the head
        history = [d for d in reply.decision.decisions if d.source == "history" and d.turn == 3]
        assert history and all(d.outcome != "kept" or d.recalled for d in history)
        row = standing_row(reply)
        assert row.outcome == "kept" and row.pinned and row.fidelity == "L0"
        assert row.token_count_after <= int(chat.builder.budget.available * 0.1) + 1
        assert "Can't wait" not in model.requests[-1].messages[0].content  # chit-chat kept nowhere
        bundle = chat.turn_bundle()
    assert [(s["id"], s["turn"], s["by"], s["shown"]) for s in bundle["standing"]] == [("s_1", 3, "said", "full")]


async def test_a_revision_replaces_a_revocation_takes_back_and_a_resume_keeps_them(tmp_path: Path) -> None:
    model = Model()
    rt = runtime(tmp_path, model, total_window=4000)
    async with rt.chat() as chat:
        await chat.send("Use 4 spaces for indentation in every snippet you write.")
        await chat.send("Answer in French from now on, please.")
        await chat.send("Actually, switch to tabs for indentation; our editor config wants them now.")
        await chat.send("You can go back to English now.")
        reply = await chat.send("Write the nightly job.")
        run_id, path = chat.run_id, chat.trace_path
        text = model.requests[-1].messages[0].content
        assert "switch to tabs" in text and "4 spaces" not in text and "French" not in text
        assert [o.id for o in chat.standing()] == ["s_3"]
        assert standing_row(reply).outcome == "kept"
    assert path is not None
    events = events_of(path)
    retracts = [(e["turn"], e["metadata"]["object_id"], e["metadata"]["args"]["reason"]) for e in events
                if e["event_type"] == "context_action" and e["metadata"]["action"] == "retract"]
    assert retracts == [
        (3, "s_1", "revised at turn 3 by s_3: Actually, switch to tabs for indentation; our editor config wants them "
                   "now."),
        (4, "s_2", "revoked at turn 4: You can go back to English now.")]
    async with rt.chat(resume=run_id) as again:
        assert [(o.id, o.created_turn, o.revises) for o in again.standing()] == [("s_3", 3, "s_1")]
        await again.send("And the weekly one?")
        assert "- (s_3, turn 3) Actually, switch to tabs for indentation" in model.requests[-1].messages[0].content


async def test_the_models_add_constraint_is_standing_and_in_the_next_prompt(tmp_path: Path) -> None:
    model = Model(call("add_constraint", {"constraint": "Keep every total in EUR", "rationale": "the user's books"}),
                  say("Noted: totals in EUR."))
    async with runtime(tmp_path, model, total_window=8000, engine_tools="on").chat() as chat:
        await chat.send("Our books are kept in euros.")
        await chat.send("What did the east region make?")
        [obj] = chat.standing()
        assert (obj.origin, obj.standing, obj.created_turn) == ("model", "constraint", 1)
        assert "- (s_1, turn 1, the model's) Keep every total in EUR" in model.requests[-1].messages[0].content


async def test_more_than_its_share_is_shortened_oldest_first_and_the_decision_says_so(tmp_path: Path) -> None:
    model = Model()
    said = ["Answer in French from now on, I'm practising before the move to Lyon.",
            "Use 4 spaces for indentation in every snippet you write, our linter insists on it.",
            "I prefer httpx over requests for HTTP calls, we'll want async eventually.",
            "Never put emojis in your answers, they look odd in my notes.",
            "End each answer with a short list of next steps, I copy them into my task list.",
            "Make sure every function you write has type hints, mypy runs in CI now."]
    async with runtime(tmp_path, model, total_window=1024).chat() as chat:
        for text in said:
            reply = await chat.send(text)
        row = standing_row(reply)
        share = chat.config.standing_share
        assert share == STANDING_SHARE == 0.15
        assert row.token_count_after <= int(chat.builder.budget.available * share)
        [note] = [n for n in reply.decision.notes if n.startswith("standing:")]
        assert "take more than the section's share" in note and "(15% of " in note
        shown = [s["shown"] for s in chat.turn_bundle()["standing"]]
        rank = ["full", "short", "cut", "folded"]
        assert shown[0] != "full" and [rank.index(x) for x in shown] == sorted((rank.index(x) for x in shown),
                                                                             reverse=True)  # the oldest gave way first
        sent = model.requests[-1].messages[0].content
        assert all(f"s_{i}" in sent for i in range(1, 7))  # every one still named: nothing dropped silently


def test_the_section_is_recorded_with_the_decision_and_rebuilds(tmp_path: Path) -> None:
    """The trace holds the section as sent: a rebuild of the recorded turn gives the same prompt."""
    from arcana_jupyter.context.rebuild import TurnVerifier
    from arcana_jupyter.trace.reader import TraceReader

    model = Model()
    with runtime(tmp_path, model, total_window=2048).chat() as chat:
        chat.send_sync("Never put emojis in your answers, they look odd in my notes.")
        for turn in range(2, 12):
            chat.send_sync(f"Turn {turn}. {FILLER}")
        run_id = chat.run_id
    reader = TraceReader(tmp_path / "traces")
    verifier = TurnVerifier(reader, run_id, "main")
    for turn in reader.replay_turns(run_id, "main"):
        replay = reader.replay_prompt(run_id, turn, "main")
        assert replay is not None
        sections = [s["name"] for s in replay.inputs.get("sections") or []]
        assert sections[0] == "standing"
        outcome = verifier.verify(replay)
        assert (outcome[0] if isinstance(outcome, tuple) else outcome.verified) is True


async def test_with_the_embedding_model_the_learned_reader_keeps_what_the_rules_leave(tmp_path: Path) -> None:
    # Runtime()'s default relevance (embeddings="auto") gives the engine the learned reader; lexical, none
    said = "Plain ASCII in commit messages."
    for embeddings, kept in (("auto", True), ("off", False)):
        model = Model()
        cfg = RuntimeConfig(trace_dir=tmp_path / embeddings, embeddings=embeddings, total_window=4000)
        async with Runtime(config=cfg, provider=FunctionProvider(model)).chat() as chat:
            await chat.send(f"Morning! {said} What should the release script do first?")
            await chat.send("And after that?")
            path = chat.trace_path
            assert ([o.payload for o in chat.standing()] == [said]) is kept
            assert (f"- (s_1, turn 1) {said}" in model.requests[-1].messages[0].content) is kept
        assert path is not None
        rules = [e["metadata"]["args"].get("rule") for e in events_of(path)
                 if e["event_type"] == "context_action" and e["metadata"]["action"] == "standing"]
        assert rules == (["learned"] if kept else [])


async def test_what_the_models_reply_takes_up_as_lasting_is_in_every_later_prompt(tmp_path: Path) -> None:
    # "Keep the explanations short ..." is a request for this turn to the rules and the reader; the reply says
    # it holds from now on (Runtime()'s default relevance gives the engine the reader this needs)
    said = "Keep the explanations short, two paragraphs at most."
    model = Model(say("Understood, I'll keep to that from now on. Here is the loader."), say("Done."))
    cfg = RuntimeConfig(trace_dir=tmp_path / "traces", total_window=4000)
    async with Runtime(config=cfg, provider=FunctionProvider(model)).chat() as chat:
        await chat.send(f"The loader is slow. {said}")
        await chat.send("Now the writer, please.")
        assert [(o.payload, o.created_turn) for o in chat.standing()] == [(said, 1)]
        assert f"- (s_1, turn 1) {said}" in model.requests[-1].messages[0].content
        path = chat.trace_path
        bundle = chat.turn_bundle()
    # the inspector's list says why it is there (not a rule: the reply took it up), so the user can judge it
    assert [(s["id"], s.get("acknowledged"), s.get("learned")) for s in bundle["standing"]] == [("s_1", True, None)]
    assert path is not None
    rules = [e["metadata"]["args"].get("rule") for e in events_of(path)
             if e["event_type"] == "context_action" and e["metadata"]["action"] == "standing"]
    assert rules == ["acknowledged"]
