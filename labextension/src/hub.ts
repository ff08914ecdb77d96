/**
 * What the renderers, the sidebar and the notebooks share: the traces as Python reads them (the
 * server extension's `GET /arcana/trace`, no kernel needed), the contents API (listing folders
 * without 404s), the `arcana` comm of each notebook's kernel, and the notebook renames that move
 * `<old>.arcana/` to `<new>.arcana/`.
 *
 * The MIME renderers are created by JupyterLab's rendermime, not by our plugin, so the plugin
 * publishes one `Hub` on `globalThis` and the renderers look it up there. Without it (a page
 * where only the MIME extension loaded) the renderers stay read-only and say so.
 */

import { JupyterFrontEnd } from '@jupyterlab/application';
import { PageConfig, PathExt, URLExt } from '@jupyterlab/coreutils';
import { Contents, Kernel, KernelMessage, ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import type { TurnDetail } from './inspector';
import type { TraceReply } from './schema.gen';
import { TraceQuery, TraceSource, traceParams } from './source';

export const COMM_TARGET = 'arcana';
const HUB_KEY = Symbol.for('arcana-jupyter.hub');

/** The notebook's trace folder: `analysis.ipynb` -> `analysis.arcana`. */
export function traceDirFor(notebookPath: string): string {
  const dir = PathExt.dirname(notebookPath);
  const base = PathExt.basename(notebookPath, PathExt.extname(notebookPath));
  return dir ? `${dir}/${base}.arcana` : `${base}.arcana`;
}

/** A path recorded relative to the notebook's folder, as a path from the server's root. */
export function besideNotebook(notebookPath: string, relative: string): string {
  const dir = PathExt.dirname(notebookPath);
  return PathExt.normalize(dir ? PathExt.join(dir, relative) : relative);
}

export type Reply = Record<string, any>;

/** One run in the runs sidebar (see `Hub.runSummary`). */
export interface RunSummary {
  agents: string[];
  turns: number;
  /** The `run_start` event's time (UTC ISO-8601), or null. */
  started: string | null;
  /** How many times the run was resumed (its later `run_start` events). */
  resumed: number;
  /** The last event is `run_end`: the session was closed (a kernel shutdown or restart closes it too). */
  ended: boolean;
  errors: number;
}

/** Anything that looks like a notebook panel (we do not depend on @jupyterlab/notebook). */
interface PanelLike {
  id: string;
  isDisposed: boolean;
  disposed: ISignal<any, void>;
  context: {
    path: string;
    pathChanged: ISignal<any, string>;
    model: { dirty: boolean };
    save(): Promise<void>;
  };
  sessionContext: {
    session: { kernel: Kernel.IKernelConnection | null } | null;
    kernelChanged: ISignal<any, any>;
    ready: Promise<void>;
  };
  content: { model: { cells: any } | null };
}

function isPanel(w: unknown): w is PanelLike {
  const p = w as any;
  return !!(p && p.context && typeof p.context.path === 'string' && p.context.path.endsWith('.ipynb') && p.sessionContext && p.content);
}

/** The `arcana` comm of one notebook's kernel. */
export class KernelLink {
  private comm: Kernel.IComm | null = null;
  private kernel: Kernel.IKernelConnection | null = null;
  private nextId = 0;
  private readonly pending = new Map<string, (r: Reply) => void>();
  private readonly changed_ = new Signal<this, void>(this);
  /** The notebook's earlier paths (renames seen by this page), oldest first. */
  readonly history: string[] = [];
  /** Answers to the path message (tests read it). */
  lastPathReply: Reply | null = null;

  constructor(private readonly hub: Hub, readonly panel: PanelLike) {
    panel.sessionContext.kernelChanged.connect(() => this.attachKernel());
    void panel.sessionContext.ready.then(() => this.attachKernel());
    panel.context.pathChanged.connect((_, newPath) => void this.hub.onRename(this, newPath));
    this.attachKernel();
  }

  get path(): string {
    return this.panel.context.path;
  }

  /** Emitted when the comm opens or closes. */
  get changed(): ISignal<this, void> {
    return this.changed_;
  }

  /** A comm is open and the kernel answered on it (arcana is loaded there). */
  get connected(): boolean {
    return !!this.comm && !this.comm.isDisposed && this.alive;
  }
  private alive = false;

  private attachKernel(): void {
    const kernel = this.panel.sessionContext.session?.kernel ?? null;
    if (kernel === this.kernel) {
      return;
    }
    this.setComm(null, false);
    this.kernel = kernel;
    if (!kernel) {
      return;
    }
    // The kernel opens a comm when `%load_ext arcana_jupyter` runs ...
    kernel.registerCommTarget(COMM_TARGET, comm => {
      this.setComm(comm, true);
      void this.request(this.pathMessage(null));
    });
    // ... and a kernel that loaded it before this page did answers ours (else it closes it).
    try {
      const comm = kernel.createComm(COMM_TARGET);
      this.setComm(comm, false);
      comm.open(this.pathMessage(null));
    } catch {
      this.setComm(null, false);
    }
  }

  private setComm(comm: Kernel.IComm | null, alive: boolean): void {
    const old = this.comm;
    this.comm = comm;
    this.alive = alive;
    if (old && old !== comm && !old.isDisposed) {
      try {
        old.close();
      } catch {
        // already gone
      }
    }
    if (comm) {
      comm.onMsg = msg => this.onMsg(comm, msg);
      comm.onClose = () => {
        if (this.comm === comm) {
          this.comm = null;
          this.alive = false;
          this.changed_.emit();
        }
      };
    }
    this.changed_.emit();
  }

  private onMsg(comm: Kernel.IComm, msg: KernelMessage.ICommMsgMsg): void {
    const data = (msg.content.data ?? {}) as Reply;
    if (data.type === 'path') {
      this.lastPathReply = data;
    }
    if (this.comm === comm && !this.alive) {
      this.alive = true; // the kernel answered: arcana is loaded there
      this.changed_.emit();
    }
    const id = data.request_id;
    if (typeof id === 'string' && this.pending.has(id)) {
      this.pending.get(id)!(data);
      this.pending.delete(id);
    }
  }

  pathMessage(oldPath: string | null): Reply {
    // Every earlier name too: a kernel started before a rename knows the notebook by its first name.
    return { type: 'path', path: this.panel.context.path, old_path: oldPath, old_paths: [...this.history], root: PageConfig.getOption('serverRoot') };
  }

  /** Send `data` and wait for the answer (null after `timeoutMs` or without a comm). */
  request(data: Reply, timeoutMs = 15000): Promise<Reply | null> {
    const comm = this.comm;
    if (!comm || comm.isDisposed || !this.connected) {
      return Promise.resolve(null);
    }
    const id = `q${++this.nextId}`;
    return new Promise(resolve => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve(null);
      }, timeoutMs);
      this.pending.set(id, r => {
        clearTimeout(timer);
        resolve(r);
      });
      try {
        comm.send({ ...data, request_id: id });
      } catch {
        clearTimeout(timer);
        this.pending.delete(id);
        resolve(null);
      }
    });
  }
}

/** The server extension's endpoint (arcana_jupyter/server/handlers.py). */
export const TRACE_ROUTE = 'arcana/trace';

export class Hub {
  readonly links = new Map<string, KernelLink>();
  private readonly linksChanged_ = new Signal<this, void>(this);
  private readonly renamed_ = new Signal<this, { oldPath: string; newPath: string }>(this);
  /** One source per trace file (from the server's root), shared by every view of it. */
  private readonly sources = new Map<string, TraceSource>();

  constructor(readonly app: JupyterFrontEnd) {}

  get contents(): Contents.IManager {
    return this.app.serviceManager.contents;
  }

  /** A link was added, removed, connected or disconnected. */
  get linksChanged(): ISignal<this, void> {
    return this.linksChanged_;
  }

  /** A notebook was renamed (after its trace folder moved with it). */
  get renamed(): ISignal<this, { oldPath: string; newPath: string }> {
    return this.renamed_;
  }

  /** Track a widget if it is a notebook panel. */
  track(widget: unknown): void {
    if (!isPanel(widget) || [...this.links.values()].some(l => l.panel === widget)) {
      return;
    }
    const link = new KernelLink(this, widget);
    this.lastPaths.set(link, link.path);
    this.links.set(widget.id, link);
    link.changed.connect(() => this.linksChanged_.emit());
    widget.disposed.connect(() => {
      this.links.delete(widget.id);
      this.linksChanged_.emit();
    });
    this.linksChanged_.emit();
  }

  /** The link of the notebook at `path` (null when it is not open or has no kernel). */
  linkFor(path: string | null | undefined): KernelLink | null {
    if (!path) {
      return null;
    }
    for (const l of this.links.values()) {
      if (l.path === path) {
        return l;
      }
    }
    return null;
  }

  /** The items of folder `dir`, or null when it does not exist (asked of its parent: no 404). */
  async list(dir: string): Promise<Contents.IModel[] | null> {
    const clean = dir.replace(/^\/+|\/+$/g, '');
    if (clean) {
      const parent = PathExt.dirname(clean);
      const name = PathExt.basename(clean);
      let siblings: Contents.IModel[] | null;
      try {
        siblings = await this.listExisting(parent);
      } catch {
        return null;
      }
      if (!siblings || !siblings.some(m => m.name === name && m.type === 'directory')) {
        return null;
      }
    }
    return this.listExisting(clean);
  }

  private async listExisting(dir: string): Promise<Contents.IModel[] | null> {
    try {
      const model = await this.contents.get(dir, { content: true, type: 'directory' });
      return (model.content ?? []) as Contents.IModel[];
    } catch {
      return null;
    }
  }

  /** Whether file `path` exists (listing its folder). */
  async fileInfo(path: string): Promise<Contents.IModel | null> {
    const items = await this.list(PathExt.dirname(path));
    return items?.find(m => m.name === PathExt.basename(path) && m.type !== 'directory') ?? null;
  }

  /**
   * Ask the server extension about the trace at `path` (from the server's root). Every answer is a
   * `TraceReply`; one that is not (no extension, a proxy's error page) becomes `ok: false` saying so.
   */
  async askServer(path: string, query: TraceQuery, signal?: AbortSignal): Promise<TraceReply> {
    const settings = this.app.serviceManager.serverSettings;
    const url = URLExt.join(settings.baseUrl, TRACE_ROUTE) + '?' + traceParams(path, query);
    let resp: Response;
    try {
      resp = await ServerConnection.makeRequest(url, { cache: 'no-store', signal }, settings);
    } catch (err) {
      if (signal?.aborted) {
        throw err; // nobody waits for this answer any more (the server does not read a question still queued)
      }
      return { ok: false, message: `the server could not be reached (${String((err as Error)?.message ?? err)})` };
    }
    let body: unknown = null;
    try {
      body = await resp.json();
    } catch (err) {
      if (signal?.aborted) {
        throw err;
      }
      body = null;
    }
    if (body && typeof body === 'object' && typeof (body as TraceReply).ok === 'boolean') {
      return body as TraceReply;
    }
    return {
      ok: false,
      message: resp.status === 404
        ? 'the arcana server extension is not running in this Jupyter server (pip install arcana-jupyter there, then restart it)'
        : `HTTP ${resp.status} ${resp.statusText}`
    };
  }

  /** The source of the trace at `path` (from the server's root): one per file, shared by its views. */
  source(path: string): TraceSource {
    let s = this.sources.get(path);
    if (!s) {
      s = new TraceSource((q, signal) => this.askServer(path, q, signal));
      this.sources.set(path, s);
    }
    return s;
  }

  /**
   * The trace of a turn, as its inspector's detail: `trace_path` (relative to the notebook) when it
   * is there, else `<notebook>.arcana/<run_id>.jsonl`, that turn read by Python. Null when no file is found.
   */
  async turnDetail(notebookPath: string, tracePath: string | null | undefined, runId: string | null | undefined,
    agent: string, turn: number): Promise<TurnDetail | null> {
    const candidates: string[] = [];
    if (tracePath) {
      candidates.push(besideNotebook(notebookPath, tracePath));
    }
    if (runId) {
      candidates.push(`${traceDirFor(notebookPath)}/${runId}.jsonl`);
    }
    for (const path of [...new Set(candidates)]) {
      if (!(await this.fileInfo(path))) {
        continue;
      }
      return { path, turn: await this.source(path).turn(agent, turn) };
    }
    return null;
  }

  /**
   * What the runs sidebar says of one run file: its session names, turns, whether it ended, and
   * when it started — from the run's own `run_start` event, not the file's modification time
   * (which a resumed run, a copy or a restart changes). Null for a file that holds no event.
   */
  async runSummary(path: string, info: Contents.IModel): Promise<RunSummary | null> {
    if (!info.size) {
      return null;
    }
    let run;
    try {
      run = await this.source(path).run();
    } catch {
      return null;
    }
    if (!run.events) {
      return null;
    }
    return {
      agents: run.agents ?? [],
      turns: run.turn_count ?? 0,
      started: run.started ?? null,
      resumed: run.resumed ?? 0,
      ended: !!run.last_event_is_end,
      errors: run.error_count ?? 0
    };
  }

  /**
   * A notebook was renamed: move its own trace folder with it (when `<old>.arcana/` exists, no
   * notebook of the old name is left, and `<new>.arcana/` does not exist yet), point the outputs'
   * `trace_path` at the moved folder, and tell the kernel.
   */
  async onRename(link: KernelLink, newPath: string): Promise<void> {
    const oldPath = this.lastPaths.get(link) ?? null;
    this.lastPaths.set(link, newPath);
    if (!oldPath || oldPath === newPath) {
      return;
    }
    link.history.push(oldPath);
    const oldDir = traceDirFor(oldPath);
    const newDir = traceDirFor(newPath);
    let moved = false;
    try {
      const here = (await this.list(PathExt.dirname(oldPath))) ?? [];
      const there = PathExt.dirname(oldPath) === PathExt.dirname(newPath) ? here : (await this.list(PathExt.dirname(newPath))) ?? [];
      const hasOldDir = here.some(m => m.name === PathExt.basename(oldDir) && m.type === 'directory');
      const oldNotebookLeft = here.some(m => m.name === PathExt.basename(oldPath));
      const newDirTaken = there.some(m => m.name === PathExt.basename(newDir));
      if (hasOldDir && !oldNotebookLeft && !newDirTaken) {
        await this.contents.rename(oldDir, newDir);
        moved = true;
      }
    } catch (err) {
      console.warn(`arcana: could not move ${oldDir} to ${newDir}:`, err);
    }
    if (moved) {
      this.rewriteTracePaths(link, PathExt.basename(oldDir), PathExt.basename(newDir));
      this.sources.clear();
    }
    this.renamed_.emit({ oldPath, newPath });
    await link.request(link.pathMessage(oldPath));
  }
  private readonly lastPaths = new WeakMap<KernelLink, string>();

  /** The trace files the open notebook's outputs recorded (`metadata.arcana.trace_path`), from the server's root. */
  recordedTraces(notebookPath: string): string[] {
    const link = this.linkFor(notebookPath);
    const cells = link?.panel.content.model?.cells;
    const found = new Set<string>();
    if (!cells) {
      return [];
    }
    for (let c = 0; c < cells.length; c++) {
      const outputs = cells.get(c)?.outputs;
      for (let i = 0; outputs && i < outputs.length; i++) {
        const tp = (outputs.get(i).metadata as any)?.arcana?.trace_path;
        if (typeof tp === 'string' && tp.endsWith('.jsonl')) {
          found.add(besideNotebook(notebookPath, tp));
        }
      }
    }
    return [...found];
  }

  /** Outputs whose `trace_path` starts with `<old>.arcana/` now point at `<new>.arcana/`. */
  private rewriteTracePaths(link: KernelLink, oldDir: string, newDir: string): void {
    const cells = link.panel.content.model?.cells;
    if (!cells) {
      return;
    }
    const fix = (p: unknown) => (typeof p === 'string' && p.startsWith(oldDir + '/') ? newDir + p.slice(oldDir.length) : p);
    const wasDirty = link.panel.context.model.dirty;
    let changed = false;
    for (let c = 0; c < cells.length; c++) {
      const outputs = cells.get(c)?.outputs;
      if (!outputs) {
        continue;
      }
      for (let i = 0; i < outputs.length; i++) {
        const json = outputs.get(i).toJSON() as any;
        const meta = json.metadata?.arcana;
        if (!meta || typeof meta.trace_path !== 'string' || fix(meta.trace_path) === meta.trace_path) {
          continue;
        }
        const next = { ...json, metadata: { ...json.metadata, arcana: { ...meta, trace_path: fix(meta.trace_path) } } };
        if (next.data) {
          next.data = { ...next.data };
          for (const mime of Object.keys(next.data)) {
            const d = next.data[mime];
            if (d && typeof d === 'object' && !Array.isArray(d) && typeof d.trace_path === 'string') {
              next.data[mime] = { ...d, trace_path: fix(d.trace_path) };
            }
          }
        }
        outputs.set(i, next);
        changed = true;
      }
    }
    if (changed && !wasDirty) {
      void link.panel.context.save();
    }
  }
}

/** Publish the hub (called once by the plugin). */
export function setHub(hub: Hub): void {
  (globalThis as any)[HUB_KEY] = hub;
}

/** The hub, when the plugin is active. */
export function getHub(): Hub | null {
  return ((globalThis as any)[HUB_KEY] as Hub | undefined) ?? null;
}
