"""The turn inspector as an anywidget, for the front ends where our JupyterLab extension does not run.

VS Code and Colab run ipywidgets, not JupyterLab extensions; a JupyterLab or Notebook 7 may have the
extension disabled. There a turn's output also carries a widget view: :class:`TurnWidget` (an
``anywidget.AnyWidget``), whose ES module (``arcana_jupyter/static/widget.js``, built from
``labextension/src/widget.ts`` by ``scripts/build-labextension.sh``) draws the same inspector with
the same code as the JupyterLab MIME renderer. Why anywidget: one ES module renders in JupyterLab,
Notebook 7, VS Code, Colab and marimo, with no extension to build per front end.

- The synced trait ``bundle`` is the compact bundle the MIME output carries (updated live).
- The live actions (``state``, ``unpin``, ``hydrate``, ``retract``) and the trace as the viewer shows it
  (the prompt texts the notebook keeps only in the trace, resolved by the kernel) come as the widget's
  custom messages and are
  answered by the ``arcana`` comm's own handler (:meth:`.comm.ArcanaComm.handle`): one path,
  traced the same way (``source: user``). The messages are the models of
  :mod:`arcana_jupyter.schema.frontend`; the TypeScript types are generated from them.
- The output keeps our MIME type, the static HTML and the text beside the widget view, so a
  notebook reopened without widget state (or where the widget cannot render) still shows the turn;
  where our extension runs, its renderer ranks ahead of the widget view and is the one shown.

``%arcana_replay`` shows :class:`ReplayWidget` the same way (the same ES module draws the trace viewer;
the widget answers ``trace`` requests about its own run's file, which the kernel reads for the replay).

When (``%config ArcanaMagics.frontend``): ``"mime"`` never, ``"widget"`` always (when anywidget and
the built module are there), ``"auto"`` (default) in VS Code, in Colab, and in a kernel started by a
Jupyter server whose front end never answered the ``arcana`` comm (our extension opens and answers it).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
STATIC = Path(__file__).resolve().parents[1] / "static"
ESM = STATIC / "widget.js"
CSS = STATIC / "widget.css"
FRONTENDS = ("auto", "mime", "widget")
WIDGET_MESSAGES = ("state", "action", "trace", "whatif")
"""What the widget may ask (the comm's ``path`` message is the JupyterLab extension's alone)."""


def widget_problem() -> str | None:
    """Why the widget cannot be shown here (``None``: it can)."""
    if importlib.util.find_spec("anywidget") is None:
        return "anywidget is not installed (it comes with arcana-jupyter): pip install anywidget ipywidgets"
    if not ESM.is_file():
        return f"the widget's ES module {ESM} is not built: run scripts/build-labextension.sh"
    return None


def in_vscode(user_ns: dict[str, Any] | None = None) -> bool:
    """A kernel VS Code's Jupyter extension runs: it sets ``__vsc_ipynb_file__`` in the namespace;
    kernels it starts inherit ``VSCODE_PID`` (or ``VSCODE_CWD``)."""
    return (bool(os.environ.get("VSCODE_PID") or os.environ.get("VSCODE_CWD"))
            or "__vsc_ipynb_file__" in (user_ns or {}))


def in_colab() -> bool:
    """A Colab kernel: ``google.colab`` is imported at its start (and ``COLAB_RELEASE_TAG`` set)."""
    if "google.colab" in sys.modules or os.environ.get("COLAB_RELEASE_TAG"):
        return True
    try:
        return importlib.util.find_spec("google.colab") is not None
    except (ImportError, ValueError):
        return False


def wants_widget(frontend: str, link: Any, user_ns: dict[str, Any] | None = None) -> bool:
    """Show the turn as a widget too? (``link``: the shell's :class:`.comm.ArcanaComm`, or ``None``.)"""
    if frontend == "mime" or link is None or widget_problem() is not None:
        return False
    if frontend == "widget":
        return True
    if not getattr(link, "registered", False):
        return False  # no kernel (a terminal IPython, a script): no front end to draw a widget
    if in_vscode(user_ns) or in_colab():
        return True
    # A kernel a Jupyter server started (JupyterLab, Notebook 7) whose page never answered our comm:
    # our extension is not loaded there. nbclient (report --verify, arcana run) sets no session name.
    return bool(os.environ.get("JPY_SESSION_NAME")) and not getattr(link, "answered", False)


def _refusal(content: Any, asks: tuple[str, ...], who: str) -> dict[str, Any]:
    from .limits import clip

    kind = content.get("type") if isinstance(content, dict) else None
    reply: dict[str, Any] = {"type": kind if isinstance(kind, str) else None, "ok": False,
                             "message": f"the {who} widget asks {', '.join(asks)}, not {clip(kind)}"}
    return _with_request_id(reply, content)


def _with_request_id(reply: dict[str, Any], content: Any) -> dict[str, Any]:
    request_id = content.get("request_id") if isinstance(content, dict) else None
    if isinstance(request_id, str) and len(request_id) <= 200:
        reply["request_id"] = request_id
    return reply


def answer(link: Any, content: Any) -> dict[str, Any] | None:
    """The comm handler's answer to one custom message of the turn widget (``None``: nothing to answer)."""
    kind = content.get("type") if isinstance(content, dict) else None
    if kind not in WIDGET_MESSAGES:
        return _refusal(content, WIDGET_MESSAGES, "turn")
    result: dict[str, Any] | None = link.handle(content)
    return result


REPLAY_MESSAGES = ("trace", "whatif")


def replay_answer(trace_file: Path, shown_as: str, content: Any, run_id: str | None = None) -> dict[str, Any]:
    """The replay widget's answer: its own run's trace as the viewer shows it (``trace``,
    :func:`.trace_reply.trace_answer`), or one of its turns rebuilt with other settings (``whatif``,
    :func:`.whatif.what_if_answer` on its own run only)."""
    from .limits import clip
    from .trace_reply import trace_answer

    if not isinstance(content, dict) or content.get("type") not in REPLAY_MESSAGES:
        return _refusal(content, REPLAY_MESSAGES, "replay")
    reply: dict[str, Any]
    if content.get("type") == "whatif":
        from .whatif import what_if_answer

        if run_id is not None and content.get("run_id") != run_id:
            reply = {"type": "whatif", "ok": False,
                     "message": f"what-if: this replay shows run {run_id}, not {clip(content.get('run_id'))}"}
        elif not trace_file.is_file():
            reply = {"type": "whatif", "ok": False, "message": f"what-if: the trace {shown_as} is not there any more"}
        else:
            reply = {"type": "whatif", **what_if_answer(trace_file.parent, content)}
        return _with_request_id(reply, content)
    return _with_request_id(trace_answer(trace_file, shown_as, content), content)


@functools.cache
def _base_class() -> type[Any]:
    """What both widgets are: the one ES module and its CSS, custom messages answered by
    :meth:`answer_message` (never a traceback in the kernel), and the output's view entry."""
    import anywidget

    class ArcanaWidget(anywidget.AnyWidget):  # type: ignore[misc]
        _esm = ESM.read_text(encoding="utf-8")
        _css = CSS.read_text(encoding="utf-8") if CSS.is_file() else ""

        def __init__(self, **traits: Any) -> None:
            super().__init__(**traits)
            self.on_msg(self._on_custom)

        def answer_message(self, content: Any) -> dict[str, Any] | None:
            """The answer to one custom message (``None``: none); each widget below answers its own."""
            return None

        def _on_custom(self, _widget: Any, content: Any, _buffers: Any) -> None:
            try:
                reply = self.answer_message(content)
                if reply is not None:
                    self.send(reply)
            except Exception:  # a front end's message never prints a traceback in the kernel
                return

        def view(self) -> dict[str, Any]:
            """The ``application/vnd.jupyter.widget-view+json`` entry of an output showing this widget."""
            return {"version_major": 2, "version_minor": 1, "model_id": self.model_id}

    return ArcanaWidget


@functools.cache
def widget_class() -> type[Any]:
    """:class:`TurnWidget` (made on first use: anywidget and ipywidgets are imported only then)."""
    import traitlets

    class TurnWidget(_base_class()):  # type: ignore[misc]
        """One turn's inspector; ``bundle`` is the compact turn bundle (docs/TURN_BUNDLE.md)."""

        kind = traitlets.Unicode("turn").tag(sync=True)
        bundle = traitlets.Dict().tag(sync=True)

        def __init__(self, bundle: dict[str, Any], link: Any) -> None:
            self._link = link
            super().__init__(bundle=bundle)

        def answer_message(self, content: Any) -> dict[str, Any] | None:
            return answer(self._link, content)

    return TurnWidget


@functools.cache
def replay_widget_class() -> type[Any]:
    """:class:`ReplayWidget`: the replay scrubber (the same ES module as the turn widget)."""
    import traitlets

    class ReplayWidget(_base_class()):  # type: ignore[misc]
        """``replay`` is the replay bundle of ``%arcana_replay`` (our replay MIME type's data)."""

        kind = traitlets.Unicode("replay").tag(sync=True)
        replay = traitlets.Dict().tag(sync=True)

        def __init__(self, replay: dict[str, Any], trace_file: Path) -> None:
            self._trace_file = Path(trace_file)
            super().__init__(replay=replay)

        def answer_message(self, content: Any) -> dict[str, Any] | None:
            run_id = self.replay.get("run_id")
            return replay_answer(self._trace_file, str(self.replay.get("trace_path") or ""), content,
                                 run_id=run_id if isinstance(run_id, str) else None)

    return ReplayWidget


def with_replay_widget(shell: Any, data: dict[str, Any], mime_type: str, trace_file: Path) -> dict[str, Any]:
    """``data`` (a replay output) with the replay widget's view added when the widget is wanted."""
    from .registry import loaded

    magics = loaded.get(id(shell))
    link = shell_link(shell)
    if magics is None or mime_type not in data or not wants_widget(
            getattr(magics, "frontend", "mime"), link, getattr(shell, "user_ns", None)):
        return data
    try:
        shown = replay_widget_class()(data[mime_type], trace_file)
    except Exception:  # no widget then: the MIME bundle and the static scrubber still show the replay
        return data
    return {WIDGET_VIEW: shown.view(), **data}


def turn_widget(bundle: dict[str, Any], link: Any) -> Any:
    """A :class:`TurnWidget` showing ``bundle`` whose actions ``link`` (an :class:`.comm.ArcanaComm`) answers."""
    return widget_class()(bundle, link)


def shell_link(shell: Any) -> Any:
    """The ``arcana`` comm handler of ``shell`` (made by ``%load_ext``), or ``None``."""
    from .registry import links

    return links.get(id(shell))
