"""TurnSummary extraction on crafted turns: each field from the rule that should find it."""

from __future__ import annotations

from arcana_jupyter.adaptive.turn_summary import extract_errors, extract_files, sentences, summarise_turn
from arcana_jupyter.messages import Message, ToolCall

TRACEBACK = """Traceback (most recent call last):
  File "<cell>", line 1, in <module>
    pd.read_csv('x')
  File "/usr/lib/pandas/io.py", line 10, in read_csv
    raise FileNotFoundError
FileNotFoundError: [Errno 2] No such file or directory: 'data/sales_2024.csv'"""

TURN = [
    Message(role="user", content=(
        "Load data/sales_2024.csv and compare regions. You must keep the original file untouched, never print "
        "customer emails, and only use pandas. Always round to 2 decimals. Don't plot yet.\n"
        "Constraint: answers in EUR")),
    Message(role="assistant",
            content="Here's my plan:\n1. Load the CSV with pandas\n2. Group by region\n3. Compare growth",
            tool_calls=(ToolCall(id="c1", name="run_python",
                                 arguments='{"code": "pd.read_csv(\'data/sales_2024.csv\')'
                                           '.to_parquet(\'out/sales.parquet\')"}'),)),
    Message(role="tool", tool_call_id="c1", name="run_python", content=TRACEBACK),
    Message(role="assistant", content=(
        "The file was missing, so I used data/sales.csv instead. We'll use a left join rather than inner. "
        "This is because some regions have no 2023 rows.\n\nNorth grew fastest at 12.4% while South dropped 3%. "
        "See https://example.com/report.html for details.\n\nNext, I'll plot the growth per region. "
        "Should I include Q4 returns?")),
]


def test_request_is_the_users_message() -> None:
    d = summarise_turn(3, TURN)
    assert d.turn == 3 and d.request.startswith("Load data/sales_2024.csv and compare regions.")


def test_plans_from_an_intro_list_and_forward_looking_sentences() -> None:
    d = summarise_turn(3, TURN)
    assert d.plans == []  # the user wrote no steps: these are the model's
    assert d.model_plans == ["Load the CSV with pandas", "Group by region", "Compare growth",
                             "Next, I'll plot the growth per region."]


def test_numbered_findings_without_a_plan_intro_are_not_plans() -> None:
    d = summarise_turn(1, [Message(role="user", content="Which region?"),
                           Message(role="assistant", content="Results:\n1. North grew 12%\n2. South fell 3%")])
    assert d.plans == [] and d.model_plans == []
    assert d.findings == []  # the model's reply is its claim, not a finding
    assert d.claims == ["North grew 12%", "South fell 3%"]


def test_user_numbered_steps_and_plan_lines_are_plans() -> None:
    d = summarise_turn(1, [Message(role="user", content="Do this:\n1) clean nulls\n2) dedupe rows\nPlan: then export")])
    assert d.plans == ["clean nulls", "dedupe rows", "then export"]


def test_decisions_keep_their_rationale_inline_and_next_sentence() -> None:
    d = summarise_turn(3, TURN)
    assert [(x.text, x.rationale) for x in d.decisions] == [
        ("We'll use a left join rather than inner.", "This is because some regions have no 2023 rows.")
    ]
    inline = summarise_turn(1, [Message(role="assistant",
                                        content="I decided to use DuckDB because the joins are large.")])
    assert [(x.text, x.rationale) for x in inline.decisions] == [
        ("I decided to use DuckDB", "because the joins are large."),
    ]


def test_constraints_are_the_explicit_lines_only() -> None:
    """Sentences with a cue word ("never", "can't") are not constraints ("Can't wait." was one): the
    user's standing instructions are recognised by adaptive/standing.py and kept in their own section."""
    d = summarise_turn(3, TURN)
    assert [(c.text, c.implicit, c.source) for c in d.constraints] == [("answers in EUR", False, "user")]
    for text in ("Can't wait.", "I always forget my keys when I leave in a hurry.", "You never touch the raw folder.",
                 "Should we always use UUIDs for primary keys?"):
        assert summarise_turn(1, [Message(role="user", content=text)]).constraints == [], text
    assert "constraints:" not in d.render()  # the user's explicit line is a standing instruction: not said twice


def test_chit_chat_and_standing_preferences_are_not_decisions() -> None:
    for text in ("I prefer tea to coffee in the afternoons, for what it's worth.",
                 "I'd rather write plain SQL than pull in an ORM.",  # standing: the standing section holds it
                 "Stuck on this one: I'd rather write plain SQL than pull in an ORM."):
        assert summarise_turn(1, [Message(role="user", content=text)]).decisions == [], text
    kept = summarise_turn(1, [Message(role="user", content="Let's go with a left join here.")]).decisions
    assert [d.text for d in kept] == ["Let's go with a left join here."]


def test_assistant_musts_are_not_user_constraints() -> None:
    d = summarise_turn(1, [Message(role="user", content="Summarise it."),
                           Message(role="assistant", content="I must admit the data is thin.")])
    assert d.constraints == []


def test_files_from_prose_and_tool_arguments_but_not_urls_or_calls() -> None:
    d = summarise_turn(3, TURN)
    assert d.files == ["data/sales_2024.csv", "data/sales.csv", "out/sales.parquet"]
    assert extract_files("see https://x.org/a/b.json and df.to_csv() and ~/notes.md, /tmp/run.log.") == [
        "~/notes.md", "/tmp/run.log"]


def test_errors_from_tracebacks_and_structured_tool_errors() -> None:
    d = summarise_turn(3, TURN)
    assert d.errors == ["FileNotFoundError: [Errno 2] No such file or directory: 'data/sales_2024.csv'"]
    assert extract_errors('{"ok": false, "error": "not_found", "hint": "x"}') == ["error: not_found"]
    assert extract_errors("KeyError: 'region'") == ["KeyError: 'region'"]
    assert extract_errors("UserWarning: deprecated") == []


def test_findings_questions_tools_and_narrative() -> None:
    d = summarise_turn(3, TURN)
    assert "North grew fastest at 12.4% while South dropped 3%." in d.claims
    assert d.findings == []  # the one tool result is a traceback (an error), the rest is the model's reply
    assert "This is because some regions have no 2023 rows." not in d.claims  # it is a rationale
    assert d.open_questions == ["Should I include Q4 returns?"]
    assert d.tools == ["run_python"]
    assert d.narrative.startswith("T3: Load data/sales_2024.csv")
    assert "tools: run_python" in d.narrative and "error: FileNotFoundError" in d.narrative
    assert "North" not in d.narrative  # the narrative says what happened, not what the model said


def test_code_fences_are_not_prose() -> None:
    assert sentences("Look:\n```python\nx = 1  # must never\n```\nDone.") == ["Look:", "Done."]
    d = summarise_turn(1, [Message(role="user", content="Run this:\n```\nassert x, 'must be set'\n```")])
    assert d.constraints == []


def test_digest_is_deterministic_and_accepts_dicts() -> None:
    as_dicts = [m.record() for m in TURN]
    assert summarise_turn(3, TURN) == summarise_turn(3, as_dicts)
    assert summarise_turn(3, TURN).render() == summarise_turn(3, as_dicts).render()


def test_empty_turn() -> None:
    d = summarise_turn(4, [])
    assert d.request == "" and d.narrative == "T4: (no user message)"
    assert d.render() == "T4: (nothing recorded)"


def test_skipped_tools_stay_out_of_the_digest() -> None:
    turn = [
        Message(role="user", content="Plan the work"),
        Message(role="assistant", content="", tool_calls=(
            ToolCall(id="a", name="create_task", arguments='{"title": "secret plan.csv"}'),
            ToolCall(id="b", name="run_python", arguments='{"path": "data.csv"}'))),
        Message(role="tool", tool_call_id="a", name="create_task", content='{"ok": false, "error": "not_found"}'),
        Message(role="tool", tool_call_id="b", name="run_python", content="ValueError: bad"),
    ]
    d = summarise_turn(1, turn, skip_tools={"create_task"})
    assert d.tools == ["run_python"] and d.errors == ["ValueError: bad"] and d.files == ["data.csv"]
    full = summarise_turn(1, turn)
    assert full.tools == ["create_task", "run_python"] and "error: not_found" in full.errors


def test_intention_with_a_reason_is_a_decision_and_filler_is_not_narrative() -> None:
    d = summarise_turn(5, [
        Message(role="user", content="Use a log scale?"),
        Message(role="assistant", content="Sure! I'll switch the y-axis to a log scale since values span decades. "
                                          "Revenue in the West is 10x the East."),
    ])
    assert [(x.text, x.rationale) for x in d.decisions] == [
        ("I'll switch the y-axis to a log scale", "since values span decades.")]
    assert d.findings == [] and d.claims == ["Revenue in the West is 10x the East."]
    assert [x.source for x in d.decisions] == ["model"]
    assert d.narrative == "T5: Use a log scale?"


def test_findings_come_from_tool_results_and_the_users_statements() -> None:
    d = summarise_turn(2, [
        Message(role="user", content="Actually the file has 1,204 rows. What is the mean of price?"),
        Message(role="assistant", content="", tool_calls=(ToolCall(id="c", name="run_python",
                                                                   arguments='{"code": "df.price.mean()"}'),)),
        Message(role="tool", tool_call_id="c", name="run_python", content="mean price: 41.2"),
        Message(role="assistant", content="The mean price is 42.0."),
    ])
    assert [(f.text, f.source) for f in d.findings] == [
        ("Actually the file has 1,204 rows.", "user"), ("mean price: 41.2", "tool:run_python")]
    assert d.claims == ["The mean price is 42.0."]
    assert "found: Actually the file has 1,204 rows. (user) | mean price: 41.2 (tool:run_python)" in d.render()
    assert "model claimed (unverified): The mean price is 42.0." in d.render()


def test_decisions_and_constraints_say_who_stated_them() -> None:
    d = summarise_turn(1, [Message(role="user", content="Use a left join because some rows lack keys."),
                           Message(role="assistant", content="Constraint: stay in EUR\nI decided to drop nulls.")])
    assert [(x.text, x.source) for x in d.decisions] == [("Use a left join", "user"),
                                                         ("I decided to drop nulls.", "model")]
    assert [(c.text, c.source) for c in d.constraints] == [("stay in EUR", "model")]
