/**
 * The trace viewer (./viewer's `TraceView`, plain DOM) as a Lumino widget, for JupyterLab: the trace
 * document and the replay MIME renderer. The node is the view's own, so its data attributes (the
 * browser benchmark reads them) are the widget's.
 */

import { Widget } from '@lumino/widgets';

import { TraceView, TraceViewerOptions } from './viewer';

export class TraceViewer extends Widget {
  readonly view: TraceView;

  constructor(options: TraceViewerOptions) {
    const view = new TraceView(options);
    super({ node: view.node });
    this.view = view;
  }

  /** Load (or reload) the file and render. */
  refresh(): Promise<void> {
    return this.view.refresh();
  }

  /** Turns of the selected agent in the file as last read. */
  get turnCount(): number {
    return this.view.turnCount;
  }

  get lastParseMs(): number {
    return this.view.lastParseMs;
  }

  get lastRenderMs(): number {
    return this.view.lastRenderMs;
  }

  protected onAfterAttach(): void {
    this.view.attached();
  }
}
