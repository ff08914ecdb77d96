/**
 * The parts of the replay output that the MIME renderer (./mime) and the replay widget (./widget)
 * share: the title line and the summary table kept in the notebook (shown when the trace cannot be
 * read). Plain DOM; every string is rendered as text.
 */

import { h } from './dom';
import { fmtCost, fmtInt, preview } from './format';
import { ReplayBundle } from './types';

/** `Replay · run r_… · 8 turns · 1,234 in / 56 out tokens, $0.0012` */
export function replayTitle(r: ReplayBundle): HTMLElement {
  const t = r.totals ?? {};
  return h('div', { class: 'arcana-replay-title' },
    h('strong', {}, 'Replay'), ` · run ${r.run_id}` + (r.agent && r.agent !== 'main' ? ` · agent ${r.agent}` : '') +
    ` · ${r.turns.length} turn${r.turns.length === 1 ? '' : 's'} · ${fmtInt(t.input_tokens ?? 0)} in / ${fmtInt(t.output_tokens ?? 0)} out tokens, ${fmtCost(t.cost_usd ?? 0)}`);
}

/** One row per turn: what the notebook keeps of the run. */
export function replaySummary(r: ReplayBundle): HTMLElement {
  return h('table', { class: 'arcana-replay-summary' },
    h('thead', {}, h('tr', {}, ...['turn', 'status', 'input', 'reply', 'tokens', 'cost'].map(c => h('th', {}, c)))),
    h('tbody', {}, ...r.turns.map(x => h('tr', {},
      h('td', {}, String(x.turn)), h('td', {}, String(x.status ?? '')), h('td', {}, preview(x.input ?? '', 80)),
      h('td', {}, preview(x.reply ?? '', 80)), h('td', {}, `${fmtInt(x.usage?.input_tokens ?? 0)} in / ${fmtInt(x.usage?.output_tokens ?? 0)} out`),
      h('td', {}, fmtCost(x.cost_usd ?? 0))))));
}
