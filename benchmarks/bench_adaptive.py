"""Adaptive context at 50 and 500 state objects: prompt tokens with tiering vs flat, and time per turn.

Run: ``python -m benchmarks.bench_adaptive`` (writes ``benchmarks/results/adaptive.md``).

A deterministic synthetic session: objects of the four kinds about 60 topics (each with its own
vocabulary) are created over the first turns and left to demote; then 40 measured turns each
mention one or two topics. Per measured turn we time promotion plus section compilation
(``begin_turn`` + ``sections``: what runs before every prompt) and, separately, ``end_turn``
(checkpoint reconciliation and demotion), and count the exact tokens (tiktoken) of the adaptive
sections against the same objects rendered flat (every object in full, as without tiering).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import random
import statistics
import time
from pathlib import Path

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.adaptive.rendering import SECTION_ACTIVE, SECTION_HARD, SECTION_SOFT
from arcana_jupyter.messages import Message
from arcana_jupyter.tokens import TokenCounter
from benchmarks._machine import cpu_model

TOPICS = 60
MEASURED_TURNS = 80
SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "do", "fi", "gu", "ha", "je", "bo"]


def _vocab(rng: random.Random, n: int) -> list[str]:
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _topics(rng: random.Random) -> list[list[str]]:
    vocab = _vocab(rng, TOPICS * 12)
    rng.shuffle(vocab)
    return [vocab[i * 12:(i + 1) * 12] for i in range(TOPICS)]


def build(n_objects: int, seed: int = 7) -> tuple[AdaptiveEngine, list[list[str]], int]:
    rng = random.Random(seed)
    topics = _topics(rng)
    engine = AdaptiveEngine()
    per_turn = max(1, n_objects // 25)
    turn = 0
    made = 0
    while made < n_objects:
        turn += 1
        engine.begin_turn(turn, "continue")
        for _ in range(min(per_turn, n_objects - made)):
            words = topics[made % TOPICS]
            head = " ".join(rng.sample(words[:4], 2))
            body = " ".join(rng.choice(words) for _ in range(25))
            kind = made % 4
            if kind == 0:
                engine.create_task(f"Work on {head}",
                                   f"Steps for {head}: {body}. Done when the {words[5]} check passes.",
                                   turn=turn)
            elif kind == 1:
                engine.decide(f"Use {head} for the {words[6]} stage", f"Because {body}", turn=turn)
            elif kind == 2:
                engine.add_constraint(f"Never change {head} without {words[7]}", f"Reason: {body}", turn=turn)
            else:
                engine.note(f"Observation on {head}: {body}", title=f"Note on {head}", turn=turn)
            made += 1
        engine.end_turn(turn, [{"role": "user", "content": f"Set up batch {turn}"},
                               {"role": "assistant", "content": f"Created {per_turn} objects."}])
    return engine, topics, turn


def measure(n_objects: int) -> dict[str, float]:
    engine, topics, turn = build(n_objects)
    rng = random.Random(n_objects)
    counter = TokenCounter()
    compile_ms: list[float] = []
    compile_cpu_ms: list[float] = []
    end_ms: list[float] = []
    tiered: list[int] = []
    other: list[int] = []
    flat: list[int] = []
    active: list[int] = []
    promoted: list[int] = []
    for _ in range(MEASURED_TURNS):
        turn += 1
        picked = rng.sample(range(TOPICS), rng.randint(1, 2))
        text = "Let's get back to " + " and ".join(" ".join(rng.sample(topics[i][:4], 1)) for i in picked) + \
            " — what changed there?"
        c0, t0 = time.thread_time(), time.perf_counter()
        promos = engine.begin_turn(turn, text)
        sections = engine.sections(turn)
        compile_ms.append((time.perf_counter() - t0) * 1000)
        compile_cpu_ms.append((time.thread_time() - c0) * 1000)
        state = [s for s in sections if s.name in (SECTION_ACTIVE, SECTION_SOFT, SECTION_HARD)]
        tiered.append(sum(counter.count_message(s.render()) for s in state))
        other.append(sum(counter.count_message(s.render()) for s in sections if s not in state))
        flat.append(counter.count_message(Message(role="system", content=engine.render_flat())))
        active.append(len(engine.active()))
        promoted.append(len(promos))
        t1 = time.perf_counter()
        engine.end_turn(turn, [{"role": "user", "content": text},
                               {"role": "assistant", "content": "Here is what changed. Found 2 issues."}])
        end_ms.append((time.perf_counter() - t1) * 1000)
    return {
        "objects": n_objects,
        "tiered_tokens": statistics.median(tiered),
        "flat_tokens": statistics.median(flat),
        "other_tokens": statistics.median(other),
        "active": statistics.median(active),
        "promoted": statistics.mean(promoted),
        "compile_median_ms": statistics.median(compile_ms),
        "compile_p90_ms": sorted(compile_ms)[int(0.9 * len(compile_ms))],
        "compile_cpu_median_ms": statistics.median(compile_cpu_ms),
        "end_turn_median_ms": statistics.median(end_ms),
    }




def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "adaptive.md")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = [measure(n) for n in (50, 500)]
    lines = [
        "# Adaptive context benchmark",
        "",
        "Command: `.venv/bin/python -m benchmarks.bench_adaptive`",
        f"Date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"Machine: {os.cpu_count()} CPUs (nproc), {cpu_model()}, Python {platform.python_version()}; "
        f"load average at start {load:.2f} (wall-clock p90 reflects other processes; "
        "the CPU column is this thread's own time)",
        "",
        f"Synthetic session: objects of four kinds over {TOPICS} topics, created over ~25 turns and left to "
        f"demote (idle_soft_after_turns=3, idle_hard_after_turns=8); then {MEASURED_TURNS} measured turns, each "
        "naming one or two topics. Tokens are exact (tiktoken cl100k_base) for the adaptive-state sections "
        "(active + soft stubs + hard anchors) vs every object rendered in full as one message. Compile time is "
        "`begin_turn` (keyword + BM25 promotion, events) + `sections` (all sections incl. checkpoint and digest "
        "band); `end_turn` (digest, checkpoint, demotion) runs after the reply and is listed separately.",
        "",
        "| objects | state tokens/turn tiered (median) | flat (median) | saved | checkpoint + digest band tokens | "
        "active objects (median) | "
        "promotions/turn (mean) | promotion + compile median ms (wall) | p90 ms (wall) | median ms (CPU) | "
        "end_turn median ms |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        saved = 1 - r["tiered_tokens"] / r["flat_tokens"]
        lines.append(
            f"| {r['objects']:.0f} | {r['tiered_tokens']:.0f} | {r['flat_tokens']:.0f} | {saved:.0%} | "
            f"{r['other_tokens']:.0f} | "
            f"{r['active']:.0f} | {r['promoted']:.1f} | {r['compile_median_ms']:.2f} | {r['compile_p90_ms']:.2f} | "
            f"{r['compile_cpu_median_ms']:.2f} | "
            f"{r['end_turn_median_ms']:.2f} |"
        )
    target = rows[-1]["compile_median_ms"] < 5.0
    lines += ["", f"Target (< 5 ms median promotion + compile at 500 objects): {'met' if target else 'NOT met'}.", ""]
    text = "\n".join(lines)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
