"""A labelled set of sentences for the standing-instruction recogniser, written for it apart from the
benchmark's splits (benchmarks/retention/standing_items.py): none of their wordings, written before the
rules were generalised (issue 39, branch standing-general), to measure how the rules carry over to
wordings they were not written from.

Each sentence is split by a hash of its text (:func:`half`) into ``tune`` — the half whose misses may be
read while the rules change — and ``held`` — the half measured only as a number, whose sentences are
not read for tuning. :func:`measure` gives precision and recall on either half (or both); ``python -m
tests.adaptive.standing_cases [tune|held|all] [-v]`` prints them (``-v``: the misses, for ``tune`` only).

Labels:

- ``SAID``: ``(sentence, kind)`` — a standing instruction (how to answer), preference (the user's taste
  in the project's choices) or constraint (a fact of the project the answers must respect);
- ``TRAPS``: ``(sentence, why)`` — never standing: chit-chat that uses the words instructions use, one-off
  requests, questions, quoted or reported words, the assistant's advice reported back, instructions to
  someone else, hypotheticals, requests for this turn and plain statements;
- ``CHANGES``: ``(earlier, change, what)`` — ``revise`` (the change replaces the earlier item),
  ``revoke`` (it takes it back and keeps nothing) or ``either`` (both readings are fair): the earlier item
  must be retracted and nothing else; with ``revise`` a new item must take its place.
"""

from __future__ import annotations

import hashlib
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

SAID: list[tuple[str, str]] = [
    # ---- instructions: how the assistant answers
    ("Please keep every reply short, no more than five sentences.", "instruction"),
    ("Write all comments in English even when I write to you in Dutch.", "instruction"),
    ("Put the code first and the explanation after it, every time.", "instruction"),
    ("No emojis, please, in anything you send me.", "instruction"),
    ("Give me the diff instead of the whole file whenever you change existing code.", "instruction"),
    ("Number your steps when you explain a procedure.", "instruction"),
    ("Don't use bullet points in your answers; I want paragraphs.", "instruction"),
    ("Always cite the docs page you got something from.", "instruction"),
    ("Use British spelling throughout.", "instruction"),
    ("Any SQL you write should use uppercase keywords.", "instruction"),
    ("Every function you give me needs a docstring.", "instruction"),
    ("Skip the pleasantries from here on and get straight to the answer.", "instruction"),
    ("I want you to ask before you assume anything about the schema.", "instruction"),
    ("From this point forward, reply in Portuguese.", "instruction"),
    ("Remember that I want type annotations on every function signature.", "instruction"),
    ("Please stop adding 'Hope this helps!' at the end of your answers.", "instruction"),
    ("Keep lines under 88 characters in any Python you write.", "instruction"),
    ("Shell commands should be for bash, not PowerShell.", "instruction"),
    ("Explanations should assume I know Python well but not asyncio.", "instruction"),
    ("Each answer should end with one question you think I should be asking.", "instruction"),
    ("Always give the time complexity of any algorithm you propose.", "instruction"),
    ("Please refer to me as Sam, not Samuel.", "instruction"),
    ("When I paste an error, explain the cause before the fix.", "instruction"),
    ("Never suggest sudo commands.", "instruction"),
    ("Avoid one-letter variable names in your code.", "instruction"),
    ("Mark any code you haven't run as untested.", "instruction"),
    ("Use metric units in every example.", "instruction"),
    ("Answers in plain text, no Markdown headings, please.", "instruction"),
    ("Please write tests alongside any function you propose.", "instruction"),
    ("Don't explain basic Python syntax to me anymore.", "instruction"),
    ("Add a short comment above each non-obvious block.", "instruction"),
    ("Stop using semicolons in the JavaScript you write.", "instruction"),
    ("From now on, when you give a command, say which directory to run it in.", "instruction"),
    ("Write commit messages in the imperative mood.", "instruction"),
    ("Format all numbers with thousands separators in the tables you make.", "instruction"),
    ("In every reply, list the files you touched at the end.", "instruction"),
    ("Please, no walls of text: three short paragraphs at most per answer.", "instruction"),
    ("Keep using snake_case for everything, even the JSON keys.", "instruction"),
    ("I'd appreciate it if you always included the imports in your snippets.", "instruction"),
    ("It would help if you flagged any breaking change in bold from now on.", "instruction"),
    ("Going forward, assume the reader is a beginner.", "instruction"),
    ("Use single quotes for strings in all Python code.", "instruction"),
    ("All code samples should be runnable as-is.", "instruction"),
    ("Answers should be in Markdown with a heading per section.", "instruction"),
    ("Don't wrap SQL in Python strings when you show it to me, show it raw.", "instruction"),
    ("Write docstrings in Google style, always.", "instruction"),
    ("Could you stop using the word 'simply' in your explanations?", "instruction"),
    ("Please always tell me which Python version a feature needs.", "instruction"),
    ("Whatever you write, include error handling.", "instruction"),
    ("Default to async code for anything that touches the network.", "instruction"),
    ("Give me one recommendation, not a menu of options, each time I ask for a choice.", "instruction"),
    ("Translate any German error message you quote into English.", "instruction"),
    ("When in doubt, ask me rather than guessing.", "instruction"),
    ("Spell out acronyms the first time you use them in an answer.", "instruction"),
    ("Limit each answer to a single code block.", "instruction"),
    ("Respond in Italian until I say otherwise.", "instruction"),
    # ---- preferences: the user's taste in the project's choices
    ("For plotting, I prefer matplotlib to seaborn.", "preference"),
    ("I'm a fan of small pure functions over big classes.", "preference"),
    ("My preference is polars over pandas for anything big.", "preference"),
    ("I tend to favour composition over inheritance.", "preference"),
    ("I'd go for FastAPI over Flask for the new services.", "preference"),
    ("Personally I'd rather keep configuration in TOML than YAML.", "preference"),
    ("I really dislike global state in modules.", "preference"),
    ("I find list comprehensions more readable than map and filter, so use those.", "preference"),
    ("When it comes to tests, I like them table-driven with pytest.mark.parametrize.", "preference"),
    ("I'm not a fan of type: ignore comments; fix the types instead.", "preference"),
    ("Dataclasses over plain dicts for records, please.", "preference"),
    ("Enums rather than magic strings, wherever possible.", "preference"),
    ("I lean towards explicit loops over clever one-liners.", "preference"),
    ("I prefer early returns to deeply nested ifs.", "preference"),
    ("For the CLI, I like argparse better than click.", "preference"),
    ("I'd choose SQLite over a server database for the prototypes.", "preference"),
    ("I love f-strings; use them over % formatting.", "preference"),
    ("I'm partial to httpx for HTTP work.", "preference"),
    ("I hate long try blocks, keep them tight around the call that fails.", "preference"),
    ("As for logging, structured JSON logs are what I like.", "preference"),
    ("Poetry over pip-tools for dependency management, if you have to pick.", "preference"),
    ("I'd rather have long descriptive variable names than comments explaining short ones.", "preference"),
    ("I generally go with pydantic for validation.", "preference"),
    ("I like my imports sorted the way isort does it.", "preference"),
    ("I'd like to stick with unittest for the legacy module.", "preference"),
    ("I much prefer reading code with type hints.", "preference"),
    ("For date handling I'd use pendulum rather than raw datetime.", "preference"),
    ("Given the choice, I'll always take a boring, well-known library over a shiny new one.", "preference"),
    ("I want the dependency list kept as short as possible.", "preference"),
    ("Raw SQL is my preference over any query builder.", "preference"),
    ("My rule of thumb: no function longer than forty lines.", "preference"),
    ("In tests I like fixtures better than setUp methods.", "preference"),
    ("I favour Makefiles for task running.", "preference"),
    ("I'd like all config to come from environment variables.", "preference"),
    ("Pathlib, not os.path, whenever you touch files.", "preference"),
    ("I prefer numpy-style docstrings.", "preference"),
    # ---- constraints: facts of the project
    ("The service runs on AWS Lambda, so cold starts matter.", "constraint"),
    ("Our deployment target is Debian 11 with Python 3.9.", "constraint"),
    ("Production has no outbound internet.", "constraint"),
    ("The database is MySQL 5.7 and we can't upgrade it this year.", "constraint"),
    ("All data must stay in the EU for GDPR reasons.", "constraint"),
    ("The frontend team only knows TypeScript.", "constraint"),
    ("We're limited to 2 GB of memory per container.", "constraint"),
    ("No new dependencies without sign-off from security.", "constraint"),
    ("The API has to stay backwards compatible with version 1 clients.", "constraint"),
    ("Tests must finish in under a minute on CI.", "constraint"),
    ("We can't use anything under the AGPL.", "constraint"),
    ("Logs must never contain personal data.", "constraint"),
    ("The client's servers run Windows Server 2016.", "constraint"),
    ("Everything has to work offline, the lab has no network.", "constraint"),
    ("Our Python is pinned at 3.8 because of a vendor library.", "constraint"),
    ("Migrations have to be reversible.", "constraint"),
    ("The code must pass mypy in strict mode.", "constraint"),
    ("Response times need to stay below 100 ms at the 95th percentile.", "constraint"),
    ("We deploy with Docker Compose on a single VM.", "constraint"),
    ("The repo is public, so no secrets in any example.", "constraint"),
    ("Only the standard library is available on the target machines.", "constraint"),
    ("Third-party cookies are off the table for legal reasons.", "constraint"),
    ("The microcontroller has only 256 KB of flash.", "constraint"),
    ("Every endpoint needs authentication.", "constraint"),
    ("The CSV exports have to open in Excel without mangling accents.", "constraint"),
    ("We're a Django shop; the new service must fit in the same stack.", "constraint"),
    ("The nightly job has a hard limit of 15 minutes.", "constraint"),
    ("No pandas on the production image, it's too big.", "constraint"),
    ("Timestamps are stored as UTC, naive datetimes are a bug here.", "constraint"),
    ("The project is licensed under Apache 2.0, so dependencies must be compatible.", "constraint"),
    ("We target Node 18 for the scripts.", "constraint"),
    ("Our users are on Safari 15 at the oldest.", "constraint"),
    ("The schema is owned by another team, we can't change tables.", "constraint"),
    ("Kubernetes is not an option; it all runs on one bare-metal server.", "constraint"),
    ("Secrets live in Vault and nowhere else.", "constraint"),
    ("Any job must be idempotent, since the scheduler retries.", "constraint"),
    ("The library has to support both Python 3.8 and 3.12.", "constraint"),
    ("We're stuck with Oracle for the warehouse.", "constraint"),
    ("The UI has to be usable with a screen reader.", "constraint"),
]

TRAPS: list[tuple[str, str]] = [
    # chit-chat with the words instructions use
    ("I always drink too much coffee on deploy days.", "chit_chat"),
    ("My manager never reads the design docs.", "chit_chat"),
    ("I prefer the mountains to the beach, honestly.", "chit_chat"),
    ("We must grab lunch sometime.", "chit_chat"),
    ("You should see the state of my desk.", "chit_chat"),
    ("I'd rather not think about the quarterly review.", "chit_chat"),
    ("The kids always wake up at six.", "chit_chat"),
    ("Never a dull day around here.", "chit_chat"),
    ("I have to pick up my daughter at four.", "chit_chat"),
    ("Honestly, I prefer working from home, the office is too loud.", "chit_chat"),
    ("The build server always breaks on Mondays, it's like a tradition.", "chit_chat"),
    ("My old team always used Java for everything.", "chit_chat"),
    ("I never understood why people like vim.", "chit_chat"),
    ("I must say, your last answer was great.", "chit_chat"),
    ("Always the way, isn't it.", "chit_chat"),
    ("We always have pizza on release day.", "chit_chat"),
    ("I'd rather sit by the door, the corner desk has no windows.", "chit_chat"),
    ("My brother always runs Linux on everything.", "chit_chat"),
    ("Nobody on the team ever writes docstrings.", "chit_chat"),
    ("Python 3.12 must be nice, I haven't tried it.", "chit_chat"),
    ("You must be tired of my questions by now.", "chit_chat"),
    ("The linter never complains about this file, weirdly.", "chit_chat"),
    ("Never thought I'd enjoy writing tests this much.", "chit_chat"),
    ("Always something with this printer.", "chit_chat"),
    # one-offs
    ("Just for this one, give me the answer in Spanish.", "one_off"),
    ("For now, skip the tests; I'll add them later.", "one_off"),
    ("This time, show the whole file rather than a diff.", "one_off"),
    ("In this answer only, use bullet points.", "one_off"),
    ("For the next reply, keep it under 50 words.", "one_off"),
    ("Only here, it's fine to use print for debugging.", "one_off"),
    ("Skip the explanation on this one.", "one_off"),
    ("Just this once, use pandas, it's a throwaway script.", "one_off"),
    ("For this particular query, don't worry about indexes.", "one_off"),
    ("Use tabs in this snippet so it matches the file I pasted.", "one_off"),
    # questions with instruction words
    ("Should I always pin my dependencies?", "question"),
    ("Is it bad practice to never write docstrings?", "question"),
    ("Would you prefer pytest or unittest here?", "question"),
    ("Do we have to support Python 2 still?", "question"),
    ("Why must every function have a docstring?", "question"),
    ("What's the rule for always using UTC?", "question"),
    ("Can we never use global variables, in your opinion?", "question"),
    ("Isn't it better to always use pathlib?", "question"),
    ("How do I make sure every test cleans up after itself?", "question"),
    ("Always use spaces, or is that a myth?", "question"),
    # quoted or reported words
    ('The style guide says "always prefer composition over inheritance".', "quoted"),
    ('My lead told me: "never push on a Friday."', "quoted"),
    ("According to the wiki, we should always run the linter before committing.", "quoted"),
    ("The contributing guide says to never merge your own PRs.", "quoted"),
    ('Someone on the forum wrote "use Rust for everything", lol.', "quoted"),
    ("My colleague insists that we must use tabs.", "quoted"),
    ("The old linter config said never to exceed 79 characters.", "quoted"),
    # the assistant's advice, reported back
    ("You told me last week to always close the connection explicitly.", "assistant"),
    ("Earlier you suggested never storing passwords in plain text.", "assistant"),
    ("You recommended pinning every dependency, right?", "assistant"),
    # instructions to someone else
    ("Tell the intern to always run the formatter before pushing.", "third_party"),
    ("Can you draft a note asking the team to never commit to main directly?", "third_party"),
    ("Remind Priya that she must update the changelog.", "third_party"),
    ("I told the new hire to use 4 spaces.", "third_party"),
    ("Write an email telling the client we can't support IE11.", "third_party"),
    ("Write a README section telling contributors to always sign their commits.", "third_party"),
    # hypotheticals
    ("If we ever move to Go, we'd have to rewrite the parser.", "hypothetical"),
    ("Suppose the box only had 256 MB; would this still work?", "hypothetical"),
    ("If I said always use tabs, would the diff get messy?", "hypothetical"),
    ("Imagine we had to support Windows, how much would change?", "hypothetical"),
    ("In a perfect world we'd never have to touch the legacy code.", "hypothetical"),
    ("Say we had to run on Python 3.6, what would break?", "hypothetical"),
    ("If the client wanted French answers, we'd need a translator.", "hypothetical"),
    # requests for this turn and plain statements
    ("The tests always pass locally but fail on CI.", "statement"),
    ("We used MySQL at my previous job.", "statement"),
    ("The old code never closed its files.", "statement"),
    ("Yesterday the deploy had to be rolled back.", "statement"),
    ("We need a function that validates email addresses.", "request"),
    ("Write a function that returns the top ten users.", "request"),
    ("Use the staging database for this test run.", "request"),
    ("Let's add pagination to the list endpoint.", "request"),
    ("I want a chart of monthly sales.", "request"),
    ("Make the button blue.", "request"),
    ("Please rename the variable to total_count.", "request"),
    ("Add a rule to the linter config that forbids print statements.", "request"),
]

CHANGES: list[tuple[str, str, str]] = [
    ("It has to run on Python 3.8.", "We've upgraded, so Python 3.11 features are fine now.", "revise"),
    ("Answer in Italian from now on.", "Back to English please, the trip is over.", "either"),
    ("Keep answers under 200 words.", "You can be longer now, up to 500 words.", "revise"),
    ("Use tabs for indentation in all code.", "Actually, we've moved to spaces: four per level.", "revise"),
    ("Never use pandas in the snippets.", "Pandas is okay again, we added it to the image.", "either"),
    ("Start each answer with a one-sentence summary.", "Forget the summary line at the top, it's redundant.",
     "revoke"),
    ("I prefer unittest over pytest.", "I've come round to pytest; use it from now on.", "revise"),
    ("We use MySQL for everything.", "We migrated to Postgres last week, so write for Postgres now.", "revise"),
    ("Always include type hints.", "Drop the type hints, the notebooks don't need them.", "revoke"),
    ("Please put a TL;DR at the top of every reply.", "No more TL;DR lines, thanks.", "revoke"),
    ("Don't use emojis in your answers.", "Emojis are fine now, the team channel loves them.", "either"),
    ("Write the docstrings in Google style, always.", "Switch the docstrings to NumPy style.", "revise"),
    ("The container has only 512 MB of memory.", "They bumped the container to 2 GB.", "revise"),
    ("Give me the full file whenever you change code.", "Just the diff is enough from now on.", "revise"),
    ("Use requests for all HTTP calls.", "Let's move to httpx instead.", "revise"),
    ("Address me as Dr. Lee.", "Call me Jo from now on, it's friendlier.", "revise"),
    ("End every answer with next steps.", "You don't need to list next steps anymore.", "revoke"),
    ("We deploy to Heroku.", "We're on Fly.io now.", "revise"),
    ("Keep the line length at 79 characters in all code.", "Let's relax the line length to 100.", "revise"),
    ("I'd rather avoid ORMs.", "I've changed my mind about ORMs, SQLAlchemy is fine.", "either"),
    ("Explain every step in detail.", "Less detail from here on, I've got the basics.", "revise"),
    ("No third-party packages, ever.", "We can use third-party packages again, the freeze is lifted.", "either"),
    ("Use metric units in every example.", "Use imperial units instead, the client is in the US.", "revise"),
    ("Put the language tag on every code fence.", "Never mind the language tags, my viewer ignores them.",
     "revoke"),
    ("Write code comments in German.", "Comments in English again, please.", "either"),
    ("Always answer in bullet points.", "Stop with the bullet points, plain paragraphs read better.", "either"),
    ("The API must support Internet Explorer 11.", "IE11 support is gone, we dropped it last sprint.",
     "revoke"),
    ("Show every shell command for zsh.", "Make that fish instead of zsh.", "revise"),
]

DISTRACTORS = [
    "Answer with code first and the explanation after, every time.",
    "The app runs on a Raspberry Pi 4.",
    "I like small functions better than big classes.",
    "Always use UTC for timestamps in examples.",
]
"""Live items of other topics a change must leave alone."""

Half = Literal["tune", "held", "all"]


def half(text: str) -> str:
    """``tune`` or ``held``, by a hash of ``text`` (fixed, so the halves never move)."""
    return "tune" if hashlib.sha256(text.encode()).digest()[0] % 2 == 0 else "held"


def _in(text: str, which: Half) -> bool:
    return which == "all" or half(text) == which


@dataclass
class Score:
    said: int = 0
    found: int = 0
    right_kind: int = 0
    traps: int = 0
    traps_kept: int = 0
    changes: int = 0
    changes_right: int = 0
    misses: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    wrong_changes: list[str] = field(default_factory=list)
    by_kind: Counter[str] = field(default_factory=Counter)
    found_by_kind: Counter[str] = field(default_factory=Counter)

    @property
    def recall(self) -> float:
        return self.found / self.said if self.said else 1.0

    @property
    def precision(self) -> float:
        kept = self.found + self.traps_kept
        return self.found / kept if kept else 1.0

    def line(self, name: str) -> str:
        kinds = ", ".join(f"{k} {self.found_by_kind[k]}/{self.by_kind[k]}" for k in ("instruction", "preference",
                                                                                     "constraint"))
        return (f"{name}: recall {self.recall:.2f} ({self.found}/{self.said}: {kinds}; kind right "
                f"{self.right_kind}/{self.found}), traps kept {self.traps_kept}/{self.traps}, precision "
                f"{self.precision:.2f}, changes linked {self.changes_right}/{self.changes}")


def measure(which: Half = "all") -> Score:
    """Precision and recall of the recogniser on one half (or all) — a sentence counts as kept when a bare
    engine given it alone keeps a standing item — and the changes applied by a bare engine (the earlier
    item among :data:`DISTRACTORS`)."""
    from arcana_jupyter.adaptive.engine import AdaptiveEngine

    def kept(text: str) -> list[str | None]:  # what a fresh engine keeps of the sentence (its kinds)
        engine = AdaptiveEngine()
        engine.begin_turn(1, text)
        return [o.standing for o in engine.standing()]

    s = Score()
    for text, kind in SAID:
        if not _in(text, which):
            continue
        s.said += 1
        s.by_kind[kind] += 1
        found = kept(text)
        if found:
            s.found += 1
            s.found_by_kind[kind] += 1
            s.right_kind += found[0] == kind
        else:
            s.misses.append(text)
    for text, _ in TRAPS:
        if not _in(text, which):
            continue
        s.traps += 1
        if kept(text):
            s.traps_kept += 1
            s.kept.append(text)
    for earlier, change, what in CHANGES:
        if not _in(change, which):
            continue
        s.changes += 1
        engine = AdaptiveEngine()
        for turn, text in enumerate([*DISTRACTORS, earlier], 1):
            engine.begin_turn(turn, text)
        before = {o.id: o.payload for o in engine.standing()}
        target = next((i for i, t in before.items() if t == earlier), None)
        engine.begin_turn(len(DISTRACTORS) + 1, change)
        after = {o.id: o for o in engine.standing()}
        kept_others = all(i in after for i, t in before.items() if i != target)
        new = [o for o in after.values() if o.id not in before]
        ok = target is not None and target not in after and kept_others
        if what == "revise":
            ok = ok and len(new) == 1 and new[0].revises == target
        elif what == "revoke":
            ok = ok and not new
        else:
            ok = ok and (not new or (len(new) == 1 and new[0].revises == target))
        s.changes_right += ok
        if not ok:
            s.wrong_changes.append(f"{earlier!r} -> {change!r} ({what}; earlier kept: {target is not None}, "
                                   f"new: {[o.payload for o in new]})")
    return s


def main(argv: list[str]) -> None:
    which: Half = "all"
    for a in argv:
        if a in ("tune", "held", "all"):
            which = a  # type: ignore[assignment]
    s = measure(which)
    print(s.line(which))
    if "-v" in argv and which == "tune":
        for m in s.misses:
            print("  missed:", m)
        for k in s.kept:
            print("  kept:  ", k)
        for c in s.wrong_changes:
            print("  change:", c)


if __name__ == "__main__":
    main(sys.argv[1:])
