/**
 * The turn inspector as an anywidget (the ipywidgets protocol): what VS Code, Colab, marimo and a
 * JupyterLab or Notebook 7 without our extension show for a turn. Compiled into one ES module
 * (arcana_jupyter/static/widget.js, by scripts/build-labextension.sh) that `jupyter/widget.py` sends
 * to the front end as the widget's `_esm`.
 *
 * It draws with the same function as the JupyterLab MIME renderer (`renderTurn`, ./inspector): no
 * JupyterLab import here or below it. What differs is only where things come from:
 * - the bundle is the widget's synced `bundle` trait (the compact bundle the MIME output carries);
 * - the live actions (state, unpin, hydrate, retract) go as the widget's custom messages to the
 *   kernel, which answers them with the same handlers as the `arcana` comm (`ArcanaComm.handle`);
 *   the messages are typed by ./schema.gen (generated from `arcana_jupyter/schema/frontend.py`);
 * - the reply is shown as text (no JupyterLab Markdown renderer here);
 * - the prompt texts that the notebook keeps only in the trace come from the kernel (a `trace`
 *   request, for a run open there: the turn as Python reads it, as the server extension sends it in
 *   JupyterLab); without a kernel the inspector says they are in the run's trace.
 */

import { clear, h } from './dom';
import { LiveSession, renderTurn, TurnContext, TurnDetail } from './inspector';
import { replaySummary, replayTitle } from './replay';
import type { ActionRequest, KernelReply, StateRequest, TraceReply, TraceRequest, WhatIfRequest } from './schema.gen';
import { Ask, TraceSource } from './source';
import type { ReplayBundle, TurnBundle } from './types';
import { TraceView } from './viewer';

/** The part of anywidget's model interface used here (https://anywidget.dev/en/afm/). */
export interface WidgetModel {
  get(name: string): unknown;
  on(event: string, callback: (...args: any[]) => void): void;
  off(event?: string | null, callback?: ((...args: any[]) => void) | null): void;
  send(content: Record<string, unknown>, callbacks?: unknown, buffers?: unknown[]): void;
}

/** How long a request waits for the kernel's answer (a busy kernel answers after its cell). */
export const REQUEST_TIMEOUT_MS = 15000;

/** Requests over the widget's custom messages; answers are matched by `request_id`. */
export class WidgetLink implements LiveSession {
  private next = 0;
  private readonly pending = new Map<string, (r: KernelReply | null) => void>();
  private readonly onMsg = (msg: unknown) => {
    const id = (msg as { request_id?: unknown } | null)?.request_id;
    const done = typeof id === 'string' ? this.pending.get(id) : undefined;
    if (done) {
      this.pending.delete(id as string);
      done(msg as KernelReply);
    }
  };

  constructor(private readonly model: WidgetModel, private readonly timeoutMs = REQUEST_TIMEOUT_MS) {
    model.on('msg:custom', this.onMsg);
  }

  request(data: StateRequest | ActionRequest | TraceRequest | WhatIfRequest): Promise<KernelReply | null> {
    const id = `w${++this.next}`;
    return new Promise(resolve => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve(null);
      }, this.timeoutMs);
      this.pending.set(id, r => {
        clearTimeout(timer);
        resolve(r);
      });
      try {
        this.model.send({ ...data, request_id: id });
      } catch {
        clearTimeout(timer);
        this.pending.delete(id);
        resolve(null);
      }
    });
  }

  /** Questions about run `runId`'s trace, answered by the kernel (a failure: `ok: false` with its reason). */
  asker(runId: string | null | undefined): Ask {
    return async query => {
      const r = await this.request({ type: 'trace', run_id: runId ?? null, ...query });
      if (!r) {
        return { ok: false, message: 'no answer from the kernel (reopened without it?)' };
      }
      if (r.type !== 'trace') {
        return { ok: false, message: String(('message' in r && r.message) || 'the kernel could not read it') };
      }
      return r as TraceReply;
    };
  }

  /** The turn as the kernel reads it from the run's trace (null: not open there, too large, or no answer). */
  async detail(runId: string | null | undefined, agent: string | null | undefined, turn: number): Promise<TurnDetail | null> {
    const r = await this.asker(runId)({ what: 'turn', agent: agent ?? null, turn });
    if (!r.ok || !r.turn_view) {
      return null;
    }
    return { path: r.path ?? 'the trace', turn: r.turn_view };
  }

  dispose(): void {
    this.model.off('msg:custom', this.onMsg);
    for (const done of this.pending.values()) {
      done(null);
    }
    this.pending.clear();
  }
}

/** Inspectors the reader opened, by model: a redraw (a live update, another view) keeps them open. */
const opened = new WeakMap<WidgetModel, boolean>();

/** Draw the model's bundle into `el`; returns the clean-up anywidget calls when the view goes. */
export function renderWidget(model: WidgetModel, el: HTMLElement): () => void {
  el.classList.add('arcana-widget');
  const host = document.createElement('div');
  host.className = 'arcana-turn-body';
  el.appendChild(host);
  const link = new WidgetLink(model);
  const draw = () => {
    const b = model.get('bundle') as TurnBundle;
    const summary = host.querySelector('.arcana-summary');
    const open = summary ? summary.getAttribute('aria-expanded') === 'true' : !!opened.get(model);
    const ctx: TurnContext = { replyShown: false };
    if (b && typeof b === 'object' && b.status !== 'running') {
      ctx.live = link;
      ctx.loadDetail = () => link.detail(b.run_id, b.agent, Number(b.turn));
    }
    renderTurn(host, b, open, ctx);
    host.querySelector('.arcana-summary')?.addEventListener('click', () => {
      opened.set(model, host.querySelector('.arcana-summary')?.getAttribute('aria-expanded') === 'true');
    });
  };
  model.on('change:bundle', draw);
  draw();
  return () => {
    model.off('change:bundle', draw);
    link.dispose();
  };
}

/**
 * The replay (`%arcana_replay`): the trace viewer on the run's trace, which the kernel reads (the
 * replay widget answers `trace` for its own run's file only); the summary kept in the notebook when
 * it cannot (no kernel any more).
 */
export function renderReplayWidget(model: WidgetModel, el: HTMLElement): () => void {
  el.classList.add('arcana-widget', 'arcana-replay-widget');
  const r = model.get('replay') as ReplayBundle;
  const head = h('div', { class: 'arcana-replay-head' });
  el.appendChild(head);
  if (!r || typeof r !== 'object' || !Array.isArray(r.turns)) {
    head.appendChild(h('div', { class: 'arcana-warn' }, 'arcana: this output holds no replay data.'));
    return () => undefined;
  }
  head.appendChild(replayTitle(r));
  const status = h('div', { class: 'arcana-muted arcana-replay-status', role: 'status' }, 'Reading the trace…');
  head.appendChild(status);
  const link = new WidgetLink(model);
  let failed = false;
  const ask = link.asker(r.run_id);
  const view = new TraceView({
    path: r.trace_path,
    source: new TraceSource(async query => {
      const reply = await ask(query);
      if (query.what === 'run' && !reply.ok) {
        failed = true;
      }
      return reply;
    }),
    focusOnAttach: false,
    selectTurn: r.selected_turn ?? null,
    // The replay widget's kernel answers `whatif` for its own run (jupyter/widget.py replay_answer).
    whatIf: () => link
  });
  view.node.classList.add('arcana-viewer-inline');
  void view.refresh().then(() => {
    if (failed) {
      status.textContent = 'The kernel could not read the trace: showing the summary kept in the notebook.';
      clear(el);
      el.appendChild(head);
      head.appendChild(replaySummary(r));
    } else {
      status.textContent = `From ${r.trace_path}`;
    }
  });
  el.appendChild(view.node);
  return () => link.dispose();
}

export default {
  render({ model, el }: { model: WidgetModel; el: HTMLElement }): () => void {
    return model.get('kind') === 'replay' ? renderReplayWidget(model, el) : renderWidget(model, el);
  }
};
