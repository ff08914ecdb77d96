/**
 * The MIME renderers: `application/vnd.arcana.turn+json` (the turn inspector) and
 * `application/vnd.arcana.replay+json` (the replay scrubber of `%arcana_replay`).
 *
 * A saved notebook reopened without a kernel shows both: the turn's summary is in the notebook,
 * its detail (the prompt texts) and every turn of a replay come from the trace beside the notebook,
 * read by Python in the Jupyter server (the server extension's `/arcana/trace`, ./hub). When the notebook's kernel runs arcana, the inspector of the
 * session's latest turn also offers the live actions over the `arcana` comm (./hub).
 *
 * The reply is Markdown and is rendered by JupyterLab itself: a `RenderedMarkdown` widget made with
 * the options the app's rendermime registry gave this renderer (its sanitizer, Markdown parser with
 * code highlighting, LaTeX typesetter, URL resolver and link handler) — exactly what a
 * `text/markdown` output or a Markdown cell gets — always as *untrusted* content, so the sanitizer
 * runs on it. While the turn streams, each update re-renders the reply (the latest text wins).
 * Everything else (the inspector) is rendered as text.
 */

import { MimeModel, RenderedMarkdown } from '@jupyterlab/rendermime';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Panel, Widget } from '@lumino/widgets';

import { clear, h } from './dom';
import { besideNotebook, getHub, KernelLink, traceDirFor } from './hub';
import { LiveSession, renderTurn, TurnContext } from './inspector';
import { replaySummary, replayTitle } from './replay';
import type { KernelReply } from './schema.gen';
import { REPLAY_MIME_TYPE, ReplayBundle, TURN_MIME_TYPE, TurnBundle } from './types';
import { TraceViewer } from './viewerwidget';

/** The notebook an output belongs to: the path its URL resolver resolves against (follows renames). */
function notebookOf(options: IRenderMime.IRendererOptions): string | null {
  const path = (options.resolver as any)?.path;
  return typeof path === 'string' && path.endsWith('.ipynb') ? path : null;
}

export class TurnRenderer extends Panel implements IRenderMime.IRenderer {
  private data: TurnBundle | null = null;
  private link: KernelLink | null = null;
  /** The reply, rendered by JupyterLab's own Markdown renderer. */
  private reply: RenderedMarkdown | null = null;
  private replySource: string | null = null;
  private replyDone: Promise<void> = Promise.resolve();
  /** The inspector (summary line, progress, sections): ours, as text. */
  private readonly body = new Widget();

  constructor(private readonly options: IRenderMime.IRendererOptions) {
    super();
    this.mimeType = options.mimeType;
    this.addClass('jp-RenderedArcanaTurn');
    this.body.addClass('arcana-turn-body');
    this.addWidget(this.body);
    getHub()?.linksChanged.connect(this.onLinks, this);
  }

  private onLinks(): void {
    const link = getHub()?.linkFor(notebookOf(this.options)) ?? null;
    const connected = !!link?.connected;
    if (connected !== !!this.link?.connected || link !== this.link) {
      this.link = link;
      if (this.data && this.data.status !== 'running') {
        this.draw();
      }
    }
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this.data = model.data[this.mimeType] as unknown as TurnBundle;
    this.link = getHub()?.linkFor(notebookOf(this.options)) ?? null;
    const b = this.data;
    const text = b && typeof b === 'object' && typeof b.reply === 'string' ? b.reply : '';
    const done = this.renderReply(text);
    this.draw();
    return done;
  }

  /**
   * Hand the reply to JupyterLab's Markdown renderer (untrusted: sanitized). Updates arrive faster
   * than MathJax may typeset: renders are chained and a render whose text was superseded is skipped.
   */
  private renderReply(text: string): Promise<void> {
    if (text === this.replySource) {
      return this.replyDone;
    }
    this.replySource = text;
    if (!this.reply) {
      this.reply = new RenderedMarkdown({ ...this.options, mimeType: 'text/markdown' });
      this.reply.addClass('arcana-reply');
      this.insertWidget(0, this.reply);
    }
    const widget = this.reply;
    widget.setHidden(!text);
    this.replyDone = this.replyDone.then(async () => {
      if (this.replySource !== text || widget.isDisposed) {
        return;
      }
      await widget.renderModel(new MimeModel({ data: { 'text/markdown': text }, trusted: false }));
    }).catch(err => {
      console.warn('arcana: could not render the reply as Markdown', err);
    });
    return this.replyDone;
  }

  private draw(): void {
    const b = this.data!;
    const host = this.body.node;
    // Keep the open/closed state when the same output is re-rendered (live updates of a turn).
    const wasOpen = host.querySelector('.arcana-summary')?.getAttribute('aria-expanded') === 'true';
    const hub = getHub();
    const notebook = notebookOf(this.options);
    const ctx: TurnContext = { replyShown: true };
    if (hub && notebook && b && typeof b === 'object') {
      ctx.loadDetail = () => hub.turnDetail(notebook, b.trace_path, b.run_id, b.agent || 'main', Number(b.turn));
    }
    const link = this.link;
    if (link?.connected) {
      ctx.live = liveOf(link);
    }
    renderTurn(host, b, wasOpen, ctx);
  }

  dispose(): void {
    getHub()?.linksChanged.disconnect(this.onLinks, this);
    super.dispose();
  }

  readonly mimeType: string;
}

/** The replay scrubber: the trace viewer on the run's trace, or the summary when it is missing. */
export class ReplayRenderer extends Panel implements IRenderMime.IRenderer {
  private viewer: TraceViewer | null = null;
  private readonly head = new Widget({ node: h('div', { class: 'arcana-replay-head' }) });
  /** The notebook's kernel link: the what-if form of the turn shown asks the kernel over it. */
  private link: KernelLink | null = null;
  private connected = false;

  constructor(private readonly options: IRenderMime.IRendererOptions) {
    super();
    this.mimeType = options.mimeType;
    this.addClass('jp-RenderedArcanaReplay');
    this.addWidget(this.head);
    getHub()?.linksChanged.connect(this.onLinks, this);
  }

  private onLinks(): void {
    const link = getHub()?.linkFor(notebookOf(this.options)) ?? null;
    const connected = !!link?.connected;
    if (link !== this.link || connected !== this.connected) {
      this.link = link;
      this.connected = connected;
      this.viewer?.view.liveChanged();
    }
  }

  /** Who rebuilds a turn for the what-if form: the kernel link while arcana answers on it, else null. */
  private live(): LiveSession | null {
    const link = this.link;
    return link?.connected ? liveOf(link) : null;
  }

  dispose(): void {
    getHub()?.linksChanged.disconnect(this.onLinks, this);
    super.dispose();
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const r = model.data[this.mimeType] as unknown as ReplayBundle;
    const node = this.head.node;
    clear(node);
    if (!r || typeof r !== 'object' || !Array.isArray(r.turns)) {
      node.appendChild(h('div', { class: 'arcana-warn' }, 'arcana: this output holds no replay data.'));
      return;
    }
    node.appendChild(replayTitle(r));
    const status = h('div', { class: 'arcana-muted arcana-replay-status', role: 'status' }, 'Reading the trace…');
    node.appendChild(status);
    const hub = getHub();
    const notebook = notebookOf(this.options);
    let path: string | null = null;
    if (hub && notebook) {
      const candidates = [besideNotebook(notebook, r.trace_path), `${traceDirFor(notebook)}/${r.run_id}.jsonl`];
      for (const c of candidates) {
        if (await hub.fileInfo(c)) {
          path = c;
          break;
        }
      }
    }
    if (!hub || !path) {
      status.textContent = hub
        ? `The trace ${r.trace_path} is not beside the notebook: showing the summary kept in the notebook.`
        : 'The arcana extension is not fully active: showing the summary kept in the notebook.';
      node.appendChild(replaySummary(r));
      return;
    }
    status.textContent = `From ${path}`;
    if (!this.viewer) {
      const where = path;
      this.link = hub.linkFor(notebook) ?? null;
      this.connected = !!this.link?.connected;
      this.viewer = new TraceViewer({
        path: where, source: hub.source(where), focusOnAttach: false, selectTurn: r.selected_turn ?? null,
        whatIf: () => this.live()
      });
      this.viewer.addClass('arcana-viewer-inline');
      this.addWidget(this.viewer);
    }
    await this.viewer.refresh();
    const now = this.viewer.turnCount;
    if (now && now !== r.turns.length) {
      // The run went on after this replay was made: say so, so the header and the scrubber agree.
      status.textContent = `From ${path}: ${now} turn${now === 1 ? '' : 's'} now (${r.turns.length} when this replay was made)`;
    }
  }

  readonly mimeType: string;
}

/**
 * Our renderers' rank: ahead of the widget view (jupyterlab_widgets registers
 * `application/vnd.jupyter.widget-view+json` at rank -10; lower wins). A turn shown as the anywidget
 * (jupyter/widget.py: VS Code, Colab, or a kernel our extension never answered) carries our MIME type
 * too, and where this extension runs, this renderer (with the comm's live actions and the trace's
 * prompt texts) is the one shown; where it does not, the widget view is.
 */
export const RANK = -20;

/** One live-session object per kernel link, so what a turn drew for it (the what-if) survives a redraw. */
const LIVE = new WeakMap<object, LiveSession>();
function liveOf(link: { request(data: Record<string, any>): Promise<unknown> }): LiveSession {
  let live = LIVE.get(link);
  if (!live) {
    live = { request: data => link.request(data) as Promise<KernelReply | null> };
    LIVE.set(link, live);
  }
  return live;
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [TURN_MIME_TYPE],
  defaultRank: RANK,
  createRenderer: options => new TurnRenderer(options)
};

export const replayRendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [REPLAY_MIME_TYPE],
  defaultRank: RANK,
  createRenderer: options => new ReplayRenderer(options)
};

const extensions: IRenderMime.IExtension[] = [
  {
    id: 'arcana-jupyter:turn-renderer',
    description: 'Renders arcana turn bundles as the context inspector.',
    rendererFactory,
    rank: RANK,
    dataType: 'json'
  },
  {
    id: 'arcana-jupyter:replay-renderer',
    description: 'Renders %arcana_replay outputs as a turn scrubber over the run\'s trace.',
    rendererFactory: replayRendererFactory,
    rank: RANK,
    dataType: 'json'
  }
];

export default extensions;
