/**
 * The JupyterLab plugins: the trace viewer (file type, document widget factory, command) and a
 * sidebar listing the runs beside the active notebook. The MIME renderer is in ./mime.
 */

import { ILabShell, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import { ABCWidgetFactory, DocumentRegistry, DocumentWidget, IDocumentWidget, TextModelFactory } from '@jupyterlab/docregistry';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { ILauncher } from '@jupyterlab/launcher';
import { Contents } from '@jupyterlab/services';
import { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { clear, h } from './dom';
import { Hub, RunSummary, setHub, traceDirFor } from './hub';
import { TraceViewer } from './viewerwidget';

export { traceDirFor };

export const FILE_TYPE = 'arcana-trace';
export const FACTORY = 'Arcana trace viewer';
const MODEL = 'arcana-trace-model';
const CMD_OPEN = 'arcana:open-trace-viewer';
const CMD_RUNS = 'arcana:show-runs';

// Our own static SVG (no user data).
export const arcanaIcon = new LabIcon({
  name: 'arcana-jupyter:icon',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16" height="16">' +
    '<g class="jp-icon3" fill="#616161"><rect x="3" y="4" width="18" height="3" rx="1"/>' +
    '<rect x="3" y="10.5" width="12" height="3" rx="1"/><rect x="3" y="17" width="7" height="3" rx="1"/>' +
    '<circle cx="19" cy="15.5" r="2.5"/></g></svg>'
});

/**
 * A model factory that loads nothing: the viewer reads the raw file itself (no JSON wrapping, no
 * shared text model), which keeps large traces fast to open and refresh.
 */
class TraceModelFactory extends TextModelFactory {
  get name(): string {
    return MODEL;
  }
  get fileFormat(): Contents.FileFormat {
    return null;
  }
}

class TraceWidgetFactory extends ABCWidgetFactory<IDocumentWidget<TraceViewer>> {
  constructor(private readonly hub: Hub, options: DocumentRegistry.IWidgetFactoryOptions<IDocumentWidget<TraceViewer>>) {
    super(options);
  }

  protected createNewWidget(context: DocumentRegistry.Context): IDocumentWidget<TraceViewer> {
    const content = new TraceViewer({ path: context.path, source: this.hub.source(context.path) });
    const widget = new DocumentWidget({ content, context, reveal: context.ready.then(() => content.refresh()) });
    widget.title.icon = arcanaIcon;
    widget.addClass('arcana-trace-document');
    return widget;
  }
}

/** The sidebar: runs beside the active notebook, newest first, each opening in the viewer. */
class RunsPanel extends Widget {
  private notebook: string | null = null;
  private readonly listHost = h('div', { class: 'arcana-runs-list', role: 'list' });
  private readonly heading = h('div', { class: 'arcana-runs-heading' });
  private signature = '';
  private timer = 0;
  private busy = false;
  /** Seconds between two looks at the trace folder while the panel is shown. */
  static POLL_MS = 2000;

  constructor(private readonly app: JupyterFrontEnd, private readonly hub: Hub) {
    super();
    this.id = 'arcana-runs';
    this.addClass('arcana-runs');
    this.title.icon = arcanaIcon;
    this.title.caption = 'Arcana runs';
    const refresh = h('button', { type: 'button', class: 'arcana-btn' }, 'Refresh');
    refresh.addEventListener('click', () => void this.update_(true));
    this.node.appendChild(h('div', { class: 'arcana-runs-top' }, h('strong', {}, 'Arcana runs'), refresh));
    this.node.appendChild(this.heading);
    this.node.appendChild(this.listHost);
    hub.renamed.connect((_, { oldPath, newPath }) => {
      if (this.notebook === oldPath) {
        this.notebook = newPath;
      }
      void this.update_(true);
    });
  }

  setNotebook(path: string | null): void {
    if (path === this.notebook) {
      return;
    }
    this.notebook = path;
    void this.update_(true);
  }

  protected onAfterShow(): void {
    void this.update_(true);
    this.schedule();
  }

  protected onAfterHide(): void {
    window.clearTimeout(this.timer);
    this.timer = 0;
  }

  /** While shown, look again every POLL_MS: a run that starts or grows shows up by itself. */
  private schedule(): void {
    window.clearTimeout(this.timer);
    this.timer = window.setTimeout(() => {
      if (this.isVisible && !this.isDisposed) {
        void this.update_(false).finally(() => this.schedule());
      }
    }, RunsPanel.POLL_MS);
  }

  /** List the runs (redrawn only when the folder changed, unless `force`). */
  async update_(force = true): Promise<void> {
    if (this.busy && !force) {
      return;
    }
    this.busy = true;
    try {
      await this.draw(force);
    } finally {
      this.busy = false;
    }
  }

  private async draw(force: boolean): Promise<void> {
    if (!this.notebook) {
      clear(this.listHost);
      this.signature = '';
      this.heading.textContent = 'Open a notebook to list the runs recorded beside it.';
      return;
    }
    const notebook = this.notebook;
    const dir = traceDirFor(notebook);
    // Listing the parent first: a notebook with no trace folder yet costs no 404.
    const listing = await this.hub.list(dir);
    // Runs the notebook's outputs recorded elsewhere (a folder that could not follow a rename).
    const elsewhere = this.hub.recordedTraces(notebook).filter(p => PathExt.dirname(p) !== dir);
    const extra: Contents.IModel[] = [];
    for (const p of elsewhere) {
      const info = await this.hub.fileInfo(p);
      if (info) {
        extra.push(info);
      }
    }
    if (notebook !== this.notebook) {
      return;
    }
    const items = [...(listing ?? []), ...extra].filter((m: Contents.IModel) => m.type !== 'directory' && m.name.endsWith('.jsonl'));
    const signature = dir + '\n' + items.map(m => `${m.name}|${m.size}|${m.last_modified}`).join('\n');
    if (!force && signature === this.signature) {
      return;
    }
    // Each run as its own events tell it (session, turns, start time); files with no event — a
    // session that never started — are left out and counted.
    const runs: { m: Contents.IModel; s: RunSummary }[] = [];
    let empty = 0;
    for (const m of items) {
      const s = await this.hub.runSummary(m.path, m);
      if (s) {
        runs.push({ m, s });
      } else {
        empty += 1;
      }
    }
    if (notebook !== this.notebook) {
      return;
    }
    runs.sort((a, b) => String(b.s.started ?? '').localeCompare(String(a.s.started ?? '')) || b.m.name.localeCompare(a.m.name));
    this.signature = signature;
    clear(this.listHost);
    this.heading.textContent = `Runs in ${dir}/` + (extra.length ? ` and ${extra.length} recorded elsewhere` : '');
    if (!runs.length) {
      this.listHost.appendChild(h('div', { class: 'arcana-muted' }, 'No runs recorded for this notebook yet.'));
    }
    for (const { m, s } of runs) {
      const started = s.started ? new Date(s.started).toLocaleString() : 'start not recorded';
      const turns = `${s.turns} turn${s.turns === 1 ? '' : 's'}`;
      const status = s.ended ? 'ended' : 'open';
      const btn = h('button', { type: 'button', class: 'arcana-run-item', role: 'listitem', title: m.path },
        h('span', { class: 'arcana-mono' }, PathExt.dirname(m.path) === dir ? m.name.replace(/\.jsonl$/, '') : m.path),
        h('span', { class: 'arcana-run-meta' },
          ` · ${s.agents.join(', ') || 'main'} · ${turns} · started ${started}`
          + (s.resumed ? ` · resumed ${s.resumed}×` : '') + ` · ${status}`
          + (s.errors ? ` · ${s.errors} error${s.errors === 1 ? '' : 's'}` : '')),
        h('span', { class: 'arcana-muted' }, ` · ${((m.size ?? 0) / 1024).toFixed(0)} KiB`));
      btn.addEventListener('click', () => void this.app.commands.execute(CMD_OPEN, { path: m.path }));
      this.listHost.appendChild(btn);
    }
    if (empty) {
      this.listHost.appendChild(h('div', { class: 'arcana-muted arcana-runs-empty' },
        `${empty} empty run file${empty === 1 ? '' : 's'} (a session that never started) not listed`));
    }
  }
}

const traceViewerPlugin: JupyterFrontEndPlugin<void> = {
  id: 'arcana-jupyter:trace-viewer',
  description: 'Opens arcana trace files (run JSONL) in a turn-by-turn viewer.',
  autoStart: true,
  optional: [ILabShell, ICommandPalette, ILauncher, IDefaultFileBrowser],
  activate: (
    app: JupyterFrontEnd,
    labShell: ILabShell | null,
    palette: ICommandPalette | null,
    launcher: ILauncher | null,
    fileBrowser: IDefaultFileBrowser | null
  ) => {
    const hub = new Hub(app);
    setHub(hub);
    app.docRegistry.addModelFactory(new TraceModelFactory());
    app.docRegistry.addFileType({
      name: FILE_TYPE,
      displayName: 'Arcana trace',
      // Run files are named by run id (r_YYYYMMDD_HHMMSS_xxxxxx.jsonl); other .jsonl files keep
      // their usual editor and can still be opened with "Open With > Arcana trace viewer".
      pattern: '^r_[A-Za-z0-9_-]+\\.jsonl$',
      extensions: [],
      mimeTypes: ['application/x-arcana-trace+jsonl'],
      contentType: 'file',
      fileFormat: null,
      icon: arcanaIcon
    });
    const fileTypes = [FILE_TYPE];
    if (app.docRegistry.getFileType('jsonl')) {
      fileTypes.push('jsonl');
    }
    const factory = new TraceWidgetFactory(hub, {
      name: FACTORY,
      label: 'Arcana trace viewer',
      modelName: MODEL,
      fileTypes,
      defaultFor: [FILE_TYPE],
      readOnly: true
    });
    app.docRegistry.addWidgetFactory(factory);

    const panel = new RunsPanel(app, hub);
    const notebookOf = (w: Widget | null): string | null => {
      const ctx = (w as any)?.context as DocumentRegistry.Context | undefined;
      return ctx && typeof ctx.path === 'string' && ctx.path.endsWith('.ipynb') ? ctx.path : null;
    };
    // Every notebook panel gets a link to its kernel (the arcana comm) and follows its renames.
    const trackAll = () => {
      for (const w of app.shell.widgets('main')) {
        hub.track(w);
      }
    };
    void app.restored.then(() => {
      trackAll();
      app.docRegistry.getWidgetFactory('Notebook')?.widgetCreated.connect((_, w) => hub.track(w));
    });
    if (labShell) {
      labShell.add(panel, 'left', { rank: 900 });
      labShell.currentChanged.connect((_, change) => {
        hub.track(change.newValue);
        const nb = notebookOf(change.newValue);
        if (nb) {
          panel.setNotebook(nb);
        }
      });
      labShell.layoutModified.connect(trackAll);
    }

    app.commands.addCommand(CMD_OPEN, {
      label: 'Arcana: Open trace viewer',
      caption: 'Open a run trace (.jsonl) in the arcana trace viewer',
      icon: arcanaIcon,
      execute: async args => {
        let path = typeof args.path === 'string' ? args.path : '';
        if (!path && fileBrowser) {
          // The file selected in the file browser, if it is a trace.
          const it = fileBrowser.selectedItems();
          let item = it.next();
          while (item && !item.done) {
            if (item.value.type !== 'directory' && item.value.path.endsWith('.jsonl')) {
              path = item.value.path;
              break;
            }
            item = it.next();
          }
        }
        if (!path) {
          // The document in the main area, if it is a trace.
          const current = (app.shell.currentWidget as any)?.context?.path as string | undefined;
          if (current && current.endsWith('.jsonl')) {
            path = current;
          }
        }
        if (!path) {
          // Nothing to open directly: show the runs beside the active notebook.
          if (labShell) {
            labShell.activateById(panel.id);
            void panel.update_(true);
          }
          return;
        }
        return app.commands.execute('docmanager:open', { path, factory: FACTORY });
      }
    });
    app.commands.addCommand(CMD_RUNS, {
      label: 'Arcana: Show runs of the active notebook',
      icon: arcanaIcon,
      execute: () => {
        if (labShell) {
          labShell.activateById(panel.id);
        }
        return panel.update_(true);
      }
    });
    // Right-click on a .jsonl file in the file browser: open it in the viewer.
    for (const ft of [FILE_TYPE, 'jsonl']) {
      app.contextMenu.addItem({ command: CMD_OPEN, selector: `.jp-DirListing-item[data-file-type="${ft}"]`, rank: 3 });
    }
    if (palette) {
      palette.addItem({ command: CMD_OPEN, category: 'Arcana' });
      palette.addItem({ command: CMD_RUNS, category: 'Arcana' });
    }
    if (launcher) {
      launcher.add({ command: CMD_RUNS, category: 'Other', rank: 50 });
    }
  }
};

export default [traceViewerPlugin];
