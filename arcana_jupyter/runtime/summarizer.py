"""The summariser ``llm_summarize`` calls: the session's own model, its prompt bounded by the window,
recorded like any call (``prompt_sent`` with purpose ``summarize``, ``llm_call`` at step -1)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..context.fidelity import fit_text
from ..exceptions import ProviderError
from ..messages import Message
from ..providers.base import LLMRequest
from ..schema.events import ErrorMetadata, PromptSentMetadata, llm_call_metadata
from ..tokens import TokenCounter
from ..trace.prompt_sent import standalone_prompt_sent

if TYPE_CHECKING:
    from .session import ChatSession

SUMMARY_MAX_TOKENS = 512
"""The longest summary ``llm_summarize`` asks the session's model for."""


def _fit(counter: TokenCounter, text: str, tokens: int) -> str:
    """``text`` in at most about ``tokens`` tokens: the builder's own compression (head and tail with
    a marker, else the head), or — for a share too small for that — its first ``tokens`` tokens."""
    fitted = fit_text(counter, text, counter.count_text(text), tokens)
    return fitted[0] if fitted is not None else counter.truncate_text(text, tokens)


def _within(counter: TokenCounter, parts: list[str], room: int) -> list[str]:
    """``parts`` (joined by blank lines) in at most about ``room`` tokens: each cut to its share
    (head and tail kept) when they are too long together, then the oldest left out while they still
    are — as few left out as fit. Linear in the text: each part is counted once and what leaving the
    oldest out saves is subtracted; the join is counted again only to settle the last part or two."""
    if not parts or counter.count_text("\n\n".join(parts)) <= room:
        return parts
    share = max(16, room // len(parts) - 8)
    parts = [_fit(counter, p, share) for p in parts]
    sep = counter.count_text("\n\n")
    sizes = [counter.count_text(p) for p in parts]
    total = sum(sizes) + sep * (len(parts) - 1)
    first = 0
    while len(parts) - first > 1 and total > room:
        total -= sizes[first] + sep  # the oldest go first: the summary is of what there is room to read
        first += 1
    # parts counted one by one can differ by a token or so from their join: the first part kept is
    # the earliest whose join fits, found from the estimate in a step or two (each one count)
    def fits(k: int) -> bool:
        return counter.count_text("\n\n".join(parts[k:])) <= room

    while len(parts) - first > 1 and not fits(first):
        first += 1
    while first > 0 and fits(first - 1):
        first -= 1
    return parts[first:]


async def summarize(session: ChatSession, messages: list[Message]) -> str:
    """A summary of ``messages`` by the session's model ("" when the call fails: recorded as an error).

    Its prompt is bounded by the window like any other (a pasted page in the folded turns is cut
    to its head and tail), so summarising never asks the model for more than it can read."""
    counter, config = session.counter, session.config
    instruction = ("Summarise the conversation below in a few sentences. Keep names, numbers, decisions "
                   "and open questions. Write only the summary.")
    room = max(64, config.total_window - SUMMARY_MAX_TOKENS - counter.count_text(instruction) - 64)
    parts = [f"[{m.role}] {m.content}" for m in messages if m.content]
    parts = _within(counter, parts, room)
    prompt = [Message(role="system", content=instruction), Message(role="user", content="\n\n".join(parts))]
    if config.trace_prompt_sent and config.trace_content != "none":  # its prompt, viewable too
        session.emit(PromptSentMetadata.build(**standalone_prompt_sent(
            step=-1, model=session.provider_model, purpose="summarize", messages=prompt,
            tokens=[counter.count_message(m) for m in prompt])))
    provider = session.provider
    try:
        response = await provider.complete(LLMRequest(model=session.provider_model, messages=prompt,
                                                      max_tokens=SUMMARY_MAX_TOKENS, temperature=0))
    except ProviderError as exc:  # no summary: the builder drops the folded turns instead, and says so
        session.emit(ErrorMetadata.build(type=type(exc).__name__, where="provider", recoverable=True,
                                         message=f"the summariser call failed: {exc}", status=exc.status))
        return ""
    session.emit(llm_call_metadata(
        step=-1, purpose="summarize", system=provider.name, request_model=session.provider_model,
        input_tokens=response.usage.input_tokens, output_tokens=response.usage.output_tokens,
        request_digest=None, message=response.message.record(),
    ))
    return response.message.content
