/**
 * The MIME renderer extension for `application/vnd.arcana.turn+json`: a saved notebook reopened
 * without a kernel still shows the whole inspector. Everything is rendered as text.
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { renderTurn } from './inspector';
import { TURN_MIME_TYPE, TurnBundle } from './types';

export class TurnRenderer extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this.mimeType = options.mimeType;
    this.addClass('jp-RenderedArcanaTurn');
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = model.data[this.mimeType] as unknown as TurnBundle;
    // Keep the open/closed state when the same output is re-rendered (live updates of a turn).
    const wasOpen = this.node.querySelector('.arcana-summary')?.getAttribute('aria-expanded') === 'true';
    renderTurn(this.node, data, wasOpen);
    return Promise.resolve();
  }

  readonly mimeType: string;
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [TURN_MIME_TYPE],
  defaultRank: 40,
  createRenderer: options => new TurnRenderer(options)
};

const extension: IRenderMime.IExtension = {
  id: 'arcana-jupyter:turn-renderer',
  description: 'Renders arcana turn bundles as the context inspector.',
  rendererFactory,
  rank: 40,
  dataType: 'json'
};

export default extension;
