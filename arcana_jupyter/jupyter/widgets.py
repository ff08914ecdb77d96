"""The ipywidgets views: a live inspector under each reply, and the replay scrubber.

Widgets stay thin: each holds HTML produced by :mod:`arcana_jupyter.render` and a few buttons
whose actions call the session (``chat.unpin`` / ``chat.hydrate`` / ``chat.retract``: the same
runtime calls the model's tools use, traced the same way). The replay scrubber precomputes every
turn's HTML and switches with ``jslink`` between an ``IntSlider`` and a ``Stack``, so it keeps
working in exported HTML with no kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import ipywidgets as widgets

from .. import render

BundleSource = Callable[[], Mapping[str, Any]]


class InspectorWidget(widgets.VBox):
    """The live inspector of one turn: collapsed by default, refreshed while the turn runs."""

    def __init__(self, chat: Any, turn: int, bundle_source: BundleSource) -> None:
        self.chat = chat
        self.turn = turn
        self.bundle_source = bundle_source
        self.html = widgets.HTML(value=render.style_block() + '<div class="arcana arcana-empty">waiting for the model…</div>')
        self.actions = widgets.VBox()
        self.status = widgets.HTML(value="")
        body = widgets.VBox([self.html, self.actions, self.status])
        self.accordion = widgets.Accordion(children=[body], selected_index=None)
        self.accordion.set_title(0, f"live inspector & actions · turn {turn}")
        super().__init__([self.accordion], layout=widgets.Layout(width="100%"))
        self.add_class("arcana-live-inspector")
        self.last_bundle: Mapping[str, Any] = {}

    def refresh(self, bundle: Mapping[str, Any] | None = None) -> None:
        """Re-render from ``bundle`` (default: ask the session again)."""
        bundle = bundle if bundle is not None else self.bundle_source()
        self.last_bundle = bundle
        self.html.value = render.style_block() + '<div class="arcana">' + render.inspector_html(bundle, open_inspector=True) + "</div>"
        usage = bundle.get("usage") or {}
        self.accordion.set_title(
            0,
            f"live inspector & actions · turn {bundle.get('turn')} · {bundle.get('status')} · "
            f"{usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out tokens",
        )
        self.actions.children = self._action_rows(bundle)

    def _action_rows(self, bundle: Mapping[str, Any]) -> tuple[widgets.Widget, ...]:
        rows: list[widgets.Widget] = []
        pins = bundle.get("pins") or []
        if pins:
            buttons = [self._button(f"unpin {p.get('pin_id')}", "unlink", self._unpin, p.get("pin_id")) for p in pins]
            rows.append(widgets.HBox([widgets.Label("pins:"), *buttons]))
        tiers = bundle.get("tiers") or {}
        for tier in ("active", "soft", "hard"):
            objects = [o for o in tiers.get(tier) or [] if not o.get("retracted")]
            if not objects:
                continue
            buttons = []
            for obj in objects:
                if tier != "active":
                    buttons.append(self._button(f"hydrate {obj.get('id')}", "arrow-up", self._hydrate, obj.get("id")))
                buttons.append(self._button(f"retract {obj.get('id')}", "times", self._retract, obj.get("id")))
            rows.append(widgets.HBox([widgets.Label(f"{tier}:"), *buttons], layout=widgets.Layout(flex_flow="row wrap")))
        return tuple(rows)

    def _button(self, text: str, icon: str, action: Callable[[Any], dict[str, Any]], target: Any) -> widgets.Button:
        button = widgets.Button(description=text, icon=icon, layout=widgets.Layout(width="auto"), tooltip=text)
        button.on_click(lambda _b: self._act(action, target, text))
        return button

    def _act(self, action: Callable[[Any], dict[str, Any]], target: Any, text: str) -> None:
        try:
            result = action(target)
        except Exception as exc:  # a button must never take the kernel's cell down
            result = {"ok": False, "error": type(exc).__name__, "message": str(exc)}
        ok = result.get("ok", True) is not False
        self.status.value = render.notice_html(
            f"{text}: {'done' if ok else 'failed'} — {result.get('message') or result.get('note') or ''}".rstrip(" —"),
            kind="info" if ok else "error",
        )
        self.refresh()

    def _unpin(self, pin_id: Any) -> dict[str, Any]:
        return dict(self.chat.unpin(str(pin_id)))

    def _hydrate(self, object_id: Any) -> dict[str, Any]:
        return dict(self.chat.hydrate(str(object_id)))

    def _retract(self, object_id: Any) -> dict[str, Any]:
        return dict(self.chat.retract(str(object_id)))


Rebuilder = Callable[[int, str, int], str]
"""``(frame_index, strategy, total_window) -> HTML`` of the counterfactual view."""


class ReplayWidget(widgets.VBox):
    """Scrub a run's turns. Front-end only switching (``jslink``); counterfactuals need the kernel."""

    STRATEGIES = ("auto", "passthrough", "tail_preserve", "aggressive_truncate")

    def __init__(self, frames: Sequence[Mapping[str, Any]], *, selected: int | None = None,
                 rebuild: Rebuilder | None = None, default_window: int = 8192) -> None:
        self.frames = list(frames)
        turns = [int(f.get("turn") or 0) for f in self.frames]
        index = selected if selected is not None and 0 <= selected < len(turns) else max(0, len(turns) - 1)
        pages = [widgets.HTML(value=render.style_block() + '<div class="arcana">' + render.frame_html(f) + "</div>") for f in self.frames]
        self.stack = widgets.Stack(children=pages, selected_index=index)
        # A SelectionSlider shows turn numbers; its integer ``index`` is what jslink ties to the Stack.
        self.slider = widgets.SelectionSlider(
            options=[(str(t), i) for i, t in enumerate(turns)] or [("–", 0)], index=index, description="turn",
            continuous_update=True, layout=widgets.Layout(width="60%"),
        )
        self.link = widgets.jslink((self.slider, "index"), (self.stack, "selected_index"))
        first = self.frames[0] if self.frames else {}
        title = widgets.HTML(
            value=render.style_block()
            + f'<div class="arcana arcana-meta"><span><b>Replay</b></span><span>run <b>{render.esc(first.get("run_id"))}</b></span>'
            f"<span>agent <b>{render.esc(first.get('agent') or 'main')}</b></span>"
            f"<span>{len(turns)} turn(s)</span><span class='arcana-muted'>drag the slider; it works without a kernel once the widget state is saved</span></div>"
        )
        children: list[widgets.Widget] = [title, self.slider, self.stack]
        if rebuild is not None and self.frames:
            self.strategy = widgets.Dropdown(options=self.STRATEGIES, value="aggressive_truncate", description="strategy")
            self.window = widgets.BoundedIntText(value=default_window, min=64, max=2_000_000, step=256, description="window")
            self.run_button = widgets.Button(description="rebuild this turn", icon="refresh")
            self.counterfactual = widgets.HTML(value="")
            self._rebuild = rebuild
            self.run_button.on_click(lambda _b: self.show_counterfactual())
            box = widgets.VBox([
                widgets.HTML(value=render.style_block() + '<div class="arcana"><h4 class="arcana-h">Counterfactual: what would have been sent</h4></div>'),
                widgets.HBox([self.strategy, self.window, self.run_button]),
                self.counterfactual,
            ])
            children.append(box)
        super().__init__(children, layout=widgets.Layout(width="100%"))
        self.add_class("arcana-replay")

    def show_counterfactual(self) -> str:
        """Rebuild the selected turn under the chosen strategy and window, side by side."""
        try:
            value = self._rebuild(int(self.slider.index), str(self.strategy.value), int(self.window.value))
        except Exception as exc:
            value = render.notice_html(f"could not rebuild: {type(exc).__name__}: {exc}", kind="error")
        self.counterfactual.value = value
        return value
