"""The ``arcana`` comm: how the JupyterLab extension and the kernel talk.

Registered when the extension is loaded (``%load_ext arcana_jupyter``). The kernel registers the
comm target ``arcana`` and also opens one comm itself, so a front end already showing the notebook
learns at once that arcana runs there and answers with the notebook's path. Messages are JSON
objects with a ``type``; requests may carry a ``request_id`` that the answer repeats.

From the front end:

- ``{"type": "path", "path", "old_path", "root"}``: the notebook's path (relative to the server's
  root) at kernel start and after every rename. The kernel updates the notebook location of the
  magics (:func:`.notebook_path.report_notebook_path`); the open sessions whose trace folder was
  the old notebook's own keep writing to the moved file (the extension renames
  ``<old>.arcana/`` to ``<new>.arcana/``; if it could not, the kernel does) and new turns record
  the new ``trace_path``. Answer: ``{"type": "path", "notebook", "trace_dir", "moved": [...]}``.
- ``{"type": "state", "run_id", "agent"}``: is that run live in this kernel, and its current pins
  and adaptive-context tiers and standing instructions. Answer ``{"type": "state", "live", "turn", "pins", "tiers",
  "standing"}``.
- ``{"type": "whatif", "run_id", "agent", "turn", "step"?, "window"?, "reserve"?, "strategy"?}``: that
  recorded turn rebuilt with other settings (:func:`what_if_answer`): settings, tokens, the rows that
  changed and the rebuilt prompt (clipped). Read-only: nothing is recorded.
- ``{"type": "action", "action": "unpin" | "hydrate" | "retract" | "remember", "target", "run_id", "agent"}``:
  the same runtime calls the model's tools use (``remember``: keep a standing instruction in long-term
  memory, :meth:`ChatSession.remember_standing`), traced the same way, plus a ``user_action`` event
  with ``via: "inspector"`` (no cell holds it, so ``report --verify`` applies it again at the same
  point). Answer ``{"type": "action",
  "ok", "message", ...state}``.
- ``{"type": "trace", "what": "run" | "turn" | "diff", "run_id", "agent", "turn"?, "a"?, "b"?}``: that
  run's trace as the viewer shows it, resolved here (:mod:`.trace_reply`), for a front end that cannot
  ask the Jupyter server (the turn widget, :mod:`.widget`); only a run open in this kernel, at most
  :data:`MAX_TRACE_BYTES`. Answer ``{"type": "trace", "ok", "path", "run" | "turn_view" | "diff"}``.

Nothing a reader needs later goes over the comm: the notebook and the trace hold it all.

Hostile messages (docs/SECURITY.md): a message that is not a JSON object, a field of the wrong type,
a ``path`` with ``..`` or one that resolves (symlinks followed) outside the server's root, and an
action ``target`` longer than :data:`MAX_TARGET_CHARS` are answered ``ok: false`` and change
nothing, record nothing. Every user field an answer echoes is clipped (:func:`clip`). In the fallback
trace folder (``notebook.arcana/``, shared by every kernel started in that directory) a rename moves
only this kernel's own run files, never the folder.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path, PurePosixPath
from typing import Any

from ..exceptions import ArcanaError
from .limits import MAX_TARGET_CHARS, clip, valid_text
from .notebook_path import FRONTEND, NotebookLocation, locate_notebook, report_notebook_path
from .whatif import what_if_answer

TARGET = "arcana"
ACTIONS = ("unpin", "hydrate", "retract", "remember")
def _bad_relative(path: str) -> bool:
    """``..`` (or an empty or ``.`` part) in a path the front end reported relative to its root."""
    parts = path.lstrip("/").split("/")
    return any(part in ("", ".", "..") for part in parts)


def _wrong_typed_path_fields(data: dict[str, Any]) -> str | None:
    """Why a ``path`` message's optional fields are refused (``old_path`` and ``root`` strings or absent,
    ``old_paths`` a list of strings), or None; the path itself is checked by ``notebook_path``."""
    for name in ("old_path", "root"):
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            return f"path: {name} must be a path (text), not {clip(value)}; nothing moved"
    old_paths = data.get("old_paths")
    if old_paths is not None and not (isinstance(old_paths, list) and all(isinstance(p, str) for p in old_paths)):
        return f"path: old_paths must be a list of paths (text), not {clip(old_paths)}; nothing moved"
    return None


def _kernel_running() -> bool:
    try:
        from ipykernel.kernelbase import Kernel

        return bool(Kernel.initialized())
    except Exception:
        return False


def server_root(path: str, old_path: str | None, root: str | None, current: NotebookLocation,
                old_paths: list[str] | None = None) -> Path | None:
    """The server's root as far as the kernel can tell (see :func:`absolute_notebook`); ``None``: unknown."""
    if current.notebook is not None:
        known = current.notebook.as_posix()
        for candidate in (old_path, *(old_paths or []), path):
            if candidate:
                tail = "/" + candidate.lstrip("/")
                if known.endswith(tail):
                    return Path(known[: -len(tail)] or "/")
    if root:
        base = Path(os.path.expanduser(root))
        if base.is_absolute():
            return base
    return None


def absolute_notebook(path: str, old_path: str | None, root: str | None, current: NotebookLocation,
                      old_paths: list[str] | None = None) -> Path:
    """The absolute path of ``path`` (relative to the server's root), from what the kernel knows.

    The server's root is the known notebook's absolute path minus its relative path (``old_path``,
    an earlier name in ``old_paths``, or ``path`` itself), else the ``root`` the page reported, else the working
    directory (where jupyter_server starts a notebook's kernel).
    """
    rel = PurePosixPath(path.lstrip("/"))
    base = server_root(path, old_path, root, current, old_paths)
    return base / rel if base is not None else Path.cwd() / rel.name


class ArcanaComm:
    """The kernel side of the comm: one per IPython shell, shared by every comm it opened or got."""

    def __init__(self, magics: Any) -> None:
        self.magics = magics
        self.comms: list[Any] = []
        self.registered = False
        """The target is registered in a running kernel (a front end can answer)."""
        self.answered = False
        """A front end answered with the notebook's path: our extension runs there (see .widget)."""

    # ---- wiring --------------------------------------------------------------------------------
    def register(self) -> bool:
        """Register the target and announce arcana to the front end (only inside a real kernel)."""
        if not _kernel_running():
            return False
        import comm as comm_pkg

        manager = comm_pkg.get_comm_manager()
        manager.register_target(TARGET, self._on_open)
        self.registered = True
        with contextlib.suppress(Exception):  # a front end without our extension ignores it
            opened = comm_pkg.create_comm(target_name=TARGET, data={"type": "hello"})
            self._attach(opened)
        return True

    def _on_open(self, comm: Any, msg: dict[str, Any]) -> None:
        self._attach(comm)
        self._answer(comm, msg)

    def _attach(self, comm: Any) -> None:
        self.comms.append(comm)
        comm.on_msg(lambda msg: self._answer(comm, msg))
        comm.on_close(lambda _msg: self.comms.remove(comm) if comm in self.comms else None)

    @staticmethod
    def _data(msg: Any) -> Any:
        """The ``data`` of a comm message (``{}`` when there is none); not checked here: :meth:`handle` does."""
        content = msg.get("content") if isinstance(msg, dict) else None
        data = content.get("data") if isinstance(content, dict) else None
        return {} if data is None else data

    def _answer(self, comm: Any, msg: Any) -> None:
        try:
            reply = self.handle(self._data(msg))
            if reply is not None:
                comm.send(reply)
        except Exception:  # a front end's message never prints a traceback in the kernel
            return

    # ---- messages ------------------------------------------------------------------------------
    def handle(self, data: Any) -> dict[str, Any] | None:
        """Answer one message from the front end (``None``: nothing to answer)."""
        if not isinstance(data, dict):
            return {"type": None, "ok": False,
                    "message": f"a message to the arcana comm is a JSON object, not {type(data).__name__}"}
        kind = data.get("type")
        if not isinstance(kind, str):
            kind = None
        try:
            if kind == "path" and data.get("path"):
                self.answered = True
                wrong = _wrong_typed_path_fields(data)
                if wrong is not None:
                    reply = {"type": "path", "ok": False, "message": wrong}
                else:
                    reply = {"type": "path", **self.notebook_path(data["path"], data.get("old_path"), data.get("root"),
                                                                  list(data.get("old_paths") or []))}
            elif kind == "state":
                reply = {"type": "state", **self.state(data.get("run_id"), data.get("agent"))}
            elif kind == "action":
                reply = {"type": "action", **self.action(data)}
            elif kind == "whatif":
                reply = {"type": "whatif", **self.what_if(data)}
            elif kind == "trace":
                reply = {"type": "trace", **self.trace(data)}
            else:
                return None
        except Exception as exc:  # a message must never take the kernel's cell down
            reply = {"type": kind, "ok": False, "message": f"{type(exc).__name__}: {clip(str(exc), 300)}"}
        request_id = data.get("request_id")
        if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) and len(str(request_id)) <= 200:
            reply["request_id"] = request_id
        return reply

    def _user_ns(self) -> dict[str, Any]:
        shell = getattr(self.magics, "shell", None)
        return shell.user_ns if shell is not None else {}

    def notebook_path(self, path: str, old_path: str | None = None, root: str | None = None,
                      old_paths: list[str] | None = None) -> dict[str, Any]:
        """The notebook is (now) at ``path``: update the location and follow a moved trace folder."""
        old = locate_notebook(self._user_ns())
        if not valid_text(path, 4096) or not path.endswith(".ipynb"):
            return {"ok": False, "message": f"{clip(path)} is not a notebook"}
        if _bad_relative(path):
            return {"ok": False, "message": f"{clip(path)}: a notebook path relative to the server's root has no "
                                            "'..', '.' or empty parts; nothing moved"}
        old_path = old_path if isinstance(old_path, str) and not _bad_relative(old_path) else None
        old_paths = [p for p in old_paths or [] if not _bad_relative(p)]
        root = root if isinstance(root, str) else None
        target = absolute_notebook(path, old_path, root, old, old_paths)
        base = server_root(path, old_path, root, old, old_paths) or Path.cwd()
        try:
            inside = target.resolve().is_relative_to(base.resolve())
        except (OSError, RuntimeError):
            inside = False
        if not inside:
            return {"ok": False, "message": f"{clip(path)} resolves outside the server's root ({base}) through a "
                                            "symbolic link; the kernel keeps the notebook where it was"}
        report_notebook_path(target)
        new = locate_notebook(self._user_ns())
        moved: list[dict[str, str]] = []
        for entry in list(getattr(self.magics, "sessions", {}).values()):
            before = getattr(getattr(entry.chat, "writer", None), "path", None)
            renamed = entry.location.notebook == old.notebook and old.notebook != new.notebook
            moved.extend(self._follow(entry, old, new))
            if renamed:
                self._record_rename(entry, old, before)
        return {"ok": True, "notebook": str(new.notebook), "source": FRONTEND, "trace_dir": str(new.trace_dir),
                "moved": moved}

    @staticmethod
    def _follow(entry: Any, old: NotebookLocation, new: NotebookLocation) -> list[dict[str, str]]:
        """Point ``entry`` at the notebook's new location; its writer at the moved trace file."""
        moved: list[dict[str, str]] = []
        writer = getattr(entry.chat, "writer", None)
        path = getattr(writer, "path", None)
        if entry.location.notebook == old.notebook:
            entry.location = new
        if writer is None or path is None or old.trace_dir == new.trace_dir:
            return moved
        own = Path(path).parent
        with contextlib.suppress(OSError):
            own = own.resolve()
        if own != old.trace_dir.resolve():
            return moved  # a trace folder of another name: it stays where it is
        target = new.trace_dir / Path(path).name
        if old.notebook is None:
            # The fallback folder (notebook.arcana/) is shared by every kernel started in this
            # directory: move only this session's own file, never the folder with other kernels' runs.
            if not target.exists() and Path(path).is_file():
                new.trace_dir.mkdir(parents=True, exist_ok=True)
                os.rename(path, target)
        elif not target.exists() and own.is_dir() and not new.trace_dir.exists() and not old.notebook.exists():
            # The notebook was renamed before the front end could move its folder (the extension
            # was loaded after the rename): move it here.
            os.rename(own, new.trace_dir)
        if target.exists():
            writer.moved_to(target)
            moved.append({"run_id": str(entry.chat.run_id), "from": str(path), "to": str(target)})
        return moved

    def _record_rename(self, entry: Any, old: NotebookLocation, before: Any) -> None:
        """The run records the notebook's new name (``notebook_renamed``); the session's banner shows it."""
        from ..schema.events import NotebookRenamedMetadata

        chat = entry.chat
        after = getattr(getattr(chat, "writer", None), "path", None)
        with contextlib.suppress(Exception):  # a closed session: nothing to record, the rename stands
            chat.emit(NotebookRenamedMetadata.build(
                notebook=str(entry.location.notebook) if entry.location.notebook else None,
                from_notebook=str(old.notebook) if old.notebook else None,
                trace_path=str(after) if after is not None else None,
                from_trace_path=str(before) if before is not None and before != after else None,
            ), turn=None)
        refresh = getattr(self.magics, "refresh_banner", None)
        if refresh is not None:
            refresh(entry)

    def what_if(self, data: dict[str, Any]) -> dict[str, Any]:
        """``{"type": "whatif", "run_id", "agent", "turn", "step"?, "window"?, "reserve"?, "strategy"?}``:
        that recorded turn rebuilt with other settings, beside the recorded ones (:func:`what_if_answer`).
        The run need not be open: its trace is found as ``%arcana_replay`` finds it."""
        entry = self._entry(data.get("run_id"), data.get("agent"))
        path = getattr(getattr(entry.chat, "writer", None), "path", None) if entry is not None else None
        if path is not None:
            trace_dir = Path(path).parent
        else:
            from ..report.sources import replay_source

            location = locate_notebook(self._user_ns())
            run_id = data.get("run_id") if valid_text(data.get("run_id"), MAX_TARGET_CHARS) else None
            trace_dir, _ = replay_source(location.notebook, location.trace_dir, run_id)
        return what_if_answer(trace_dir, data)

    def _entry(self, run_id: Any, agent: Any) -> Any:
        for entry in getattr(self.magics, "sessions", {}).values():
            chat = entry.chat
            if chat.run_id == run_id and (agent is None or chat.agent == agent):
                return entry
        return None

    def state(self, run_id: Any, agent: Any) -> dict[str, Any]:
        entry = self._entry(run_id, agent)
        if entry is None:
            return {"live": False}
        chat = entry.chat
        turn = max(int(chat.turn), 1)
        engine = getattr(chat, "engine", None)
        tiers = engine.tiers_view() if engine is not None else {}
        from ..runtime.bundle import standing_items

        return {"live": True, "session": entry.name, "turn": int(chat.turn),
                "pins": [p.summary() for p in chat.pins.active(turn)], "tiers": tiers,
                "standing": standing_items(chat) if engine is not None else []}

    def trace(self, data: dict[str, Any]) -> dict[str, Any]:
        """The trace of a run open in this kernel as the viewer shows it (never a path the front end names)."""
        from .trace_reply import trace_answer

        entry = self._entry(data.get("run_id"), data.get("agent"))
        path = getattr(entry.chat, "trace_path", None) if entry is not None else None
        if entry is None or path is None:
            return {"ok": False, "message": "this run is not open in the kernel: its trace is beside the notebook"}
        reply = trace_answer(Path(path), entry.location.relative(path), data)
        reply.pop("type", None)
        return reply

    def action(self, data: dict[str, Any]) -> dict[str, Any]:
        name, target = data.get("action"), data.get("target")
        if name not in ACTIONS:
            return {"ok": False, "message": f"unknown action {clip(name)} (known: {', '.join(ACTIONS)})"}
        if not valid_text(target, MAX_TARGET_CHARS):
            return {"ok": False, "message": f"{name}: the target must be an id of 1 to {MAX_TARGET_CHARS} printable "
                                            f"characters, not {clip(target)}; nothing was done or recorded"}
        entry = self._entry(data.get("run_id"), data.get("agent"))
        if entry is None:
            return {"ok": False, "live": False, "message": "this run is not open in the kernel (read-only)"}
        if name == "remember":  # a standing instruction kept in long-term memory
            try:
                result = dict(entry.chat.remember_standing(target, via="inspector"))
            except ArcanaError as exc:
                result = {"ok": False, "message": str(exc)}
        else:
            result = dict(getattr(entry.chat, name)(target, via="inspector"))  # recorded as a user_action
        ok = result.get("ok", True) is not False and result.get("unpinned", True) is not False
        if not ok and not result.get("message") and result.get("reason"):
            result.setdefault("message", str(result["reason"]).replace("_", " "))
        message = str(result.get("message") or result.get("note") or result.get("error") or "")
        return {"ok": ok,
                "message": f"{name} {target}: {'done' if ok else 'failed'}" + (f" — {message}" if message else ""),
                "result": result, **self.state(entry.chat.run_id, entry.chat.agent)}


def register(magics: Any) -> ArcanaComm:
    """Create the comm handler of ``magics`` and register it with the kernel, if there is one."""
    link = ArcanaComm(magics)
    link.register()
    return link
