from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arcana_jupyter.messages import Message, ToolCall
from arcana_jupyter.trace import TraceReader, TraceWriter
from arcana_jupyter.trace.redact import REDACTED, Redactor, redact_text

OPENAI_KEY = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
ANTHROPIC_KEY = "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe"
PLAIN_KEY = "sk-Q1w2E3r4T5y6U7i8O9p0AaSsDdFfGg"
BEARER = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abc123"
GENERIC = "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8"  # 36 chars, after "token"
CONFIGURED = "my-local-llm-secret-42"  # no known shape: only masked because it is configured


def _leaky_metadata() -> dict:
    user = Message(role="user",
                   content=f"my key is {OPENAI_KEY}, mail me at ann.lee@example.org, card 4111 1111 1111 1111",
                   turn=1)
    call = ToolCall(id="c1", name="http", arguments=json.dumps({"headers": f"Authorization: Bearer {BEARER}"}))
    return {
        "message": user.record(),
        "history_index": 1,
        "assistant": Message(role="assistant", content="", tool_calls=(call,)).record(),
        "config": {"providers": {"anthropic": ANTHROPIC_KEY, "local": CONFIGURED}, "system_prompt": "Be terse."},
        "text_blob": f"export OPENAI_API_KEY={PLAIN_KEY}\nauth token: {GENERIC}\ncall 555-123-4567 or 123456789",
        "result": f"fetched with {CONFIGURED}",
        "reply": "Done, ann.lee@example.org.",
        "input_tokens": 42,
        "request_digest": "0123456789abcdef",
        "args": {"content": "pin this", "label": "facts", "pin_id": "p_1", "turn": 3},
    }


SECRETS = (OPENAI_KEY, ANTHROPIC_KEY, PLAIN_KEY, BEARER, GENERIC, CONFIGURED)


@pytest.mark.parametrize("mode", ["full", "redacted", "none"])
def test_secrets_never_reach_the_file(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "r.jsonl"
    with TraceWriter(path, "r", content=mode, secrets=[CONFIGURED]) as w:  # type: ignore[arg-type]
        ev = w.emit_json("user_message", _leaky_metadata(), turn=1)
        w.emit_json("error", {"type": "AuthenticationError", "message": f"401 for key {ANTHROPIC_KEY}",
                              "where": "provider"})
    data = path.read_bytes()
    for secret in SECRETS:
        assert secret.encode() not in data, (mode, secret)
        assert secret not in json.dumps(ev.metadata)
    # the pieces of a secret do not survive either (e.g. the tail after the prefix)
    assert b"Ab3dEf6hIj9kLm2nOp5q" not in data and b"api03-Zx9Y" not in data
    assert b"[REDACTED]" in data


def test_full_mode_keeps_ordinary_text(tmp_path: Path) -> None:
    r = Redactor("full", [CONFIGURED])
    md = r.clean(_leaky_metadata())
    assert md["message"]["content"] == f"my key is {REDACTED}, mail me at ann.lee@example.org, card 4111 1111 1111 1111"
    assert md["config"]["providers"] == {"anthropic": REDACTED, "local": REDACTED}
    assert md["text_blob"] == (f"export OPENAI_API_KEY={REDACTED}\nauth token: {REDACTED}\n"
                               "call 555-123-4567 or 123456789")
    assert md["assistant"]["tool_calls"][0]["arguments"] == json.dumps({"headers": f"Authorization: Bearer {REDACTED}"})
    assert md["result"] == f"fetched with {REDACTED}"
    assert md["input_tokens"] == 42 and md["request_digest"] == "0123456789abcdef"


def test_redacted_mode_masks_emails_and_long_digit_runs() -> None:
    md = Redactor("redacted").clean(_leaky_metadata())
    assert md["message"]["content"] == f"my key is {REDACTED}, mail me at {REDACTED}, card {REDACTED}"
    assert md["reply"] == f"Done, {REDACTED}."
    assert md["text_blob"].endswith(f"call {REDACTED} or {REDACTED}")
    # short numbers, dates, digests and counts stay
    assert redact_text("on 2026-11-30 we sold 12345678 units for 1,234 EUR", content="redacted") == \
        "on 2026-11-30 we sold 12345678 units for 1,234 EUR"
    assert md["request_digest"] == "0123456789abcdef" and md["input_tokens"] == 42
    assert Redactor("redacted").clean({"request_digest": "1234567890123456", "id": "123456789012"}) == {
        "request_digest": "1234567890123456", "id": "123456789012"}


def test_none_mode_nulls_message_text_keeps_structure() -> None:
    md = Redactor("none").clean(_leaky_metadata())
    assert md["message"] == {"role": "user", "content": None, "turn": 1}
    assert md["assistant"].get("content") is None  # "" is left out of records; text would be null
    assert md["assistant"]["tool_calls"][0]["arguments"] is None
    assert md["assistant"]["tool_calls"][0]["name"] == "http"
    assert md["config"]["system_prompt"] is None
    assert md["result"] is None and md["reply"] is None
    assert md["args"] == {"content": None, "label": None, "pin_id": "p_1", "turn": 3}
    assert md["history_index"] == 1 and md["input_tokens"] == 42 and md["request_digest"] == "0123456789abcdef"
    # a structured result is walked, not dropped: the pin id survives, the text does not
    assert Redactor("none").clean({"result": {"pinned": True, "pin_id": "p_9", "content": "x"}}) == {
        "result": {"pinned": True, "pin_id": "p_9", "content": None}
    }


def test_prose_is_not_mistaken_for_credentials() -> None:
    text = ("The token budget is 8000; bearer tokens are masked; basic authentication; scikit-learn and sk-learn; "
            "the key insight is simple; task-abcdefghijklmnopqrstuvwxyz stays.")
    assert redact_text(text) == text
    assert redact_text("Authorization: Bearer abc.def-123") == f"Authorization: Bearer {REDACTED}"
    assert redact_text('{"api_key": "ZXhhbXBsZS1rZXktMTIzNDU2Nzg5MGFiY2RlZg=="}') == '{"api_key": "[REDACTED]"}'


def test_short_configured_secrets_are_ignored_and_secrets_can_be_added() -> None:
    r = Redactor("full", ["abc"])  # would mask every "abc" in ordinary text
    assert r.redact_text("abc def") == "abc def"
    r.add_secret("hunter2-hunter2")
    assert r.redact_text("pw hunter2-hunter2!") == f"pw {REDACTED}!"
    with pytest.raises(ValueError, match="trace_content"):
        Redactor("partial")  # type: ignore[arg-type]


def test_none_mode_trace_still_replays_decisions(tmp_path: Path) -> None:
    from trace_fixtures import write_run

    write_run(tmp_path / "r_none.jsonl", "r_none", turns=4, content="none").close()
    data = (tmp_path / "r_none.jsonl").read_bytes()
    assert b"Question" not in data and b"Answer" not in data and b"Load-bearing" not in data
    reader = TraceReader(tmp_path, shared=False)
    replay = reader.replay_prompt("r_none", 3)
    assert replay is not None
    assert replay.request_digest and len(replay.context_decision.decisions) >= 5
    assert all(m["content"] is None for m in replay.prompt_snapshot.messages)  # type: ignore[union-attr]
    pins = reader.active_pins("r_none", 3)
    assert [p.pin_id for p in pins] == ["p_a1b2c3d4"] and pins[0].content is None and pins[0].label is None
    history = reader.history("r_none")
    assert [m.role for m in history][:3] == ["system", "user", "assistant"]
    assert all(m.content == "" for m in history)


_TEXT = st.text(alphabet="abcXYZ019 .,:;=\"'-_/\n@", max_size=40)
_KEY_BODY = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=24, max_size=48)


@settings(max_examples=150, deadline=None)
@given(prefix=_TEXT, suffix=_TEXT, body=_KEY_BODY, kind=st.sampled_from(["sk-", "sk-ant-api03-", "sk-proj-"]),
       mode=st.sampled_from(["full", "redacted", "none"]))
def test_generated_keys_never_survive(prefix: str, suffix: str, body: str, kind: str, mode: str) -> None:
    key = kind + body + "7"  # provider keys carry digits
    out = Redactor(mode).clean({"content": prefix + key + suffix, "error": {"message": f"{prefix}{key}"}})  # type: ignore[arg-type]
    dumped = json.dumps(out)
    assert key not in dumped
    if body not in prefix + suffix:
        assert body not in dumped
