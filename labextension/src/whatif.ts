/**
 * What if: the turn rebuilt by the kernel with another window, reserve, strategy, mode (classic /
 * adaptive) or relevance (lexical / semantic), beside what was
 * sent — the `whatif` message of the `arcana` comm (arcana_jupyter/jupyter/comm.py `what_if_answer`,
 * the same rebuild as `%arcana_replay --turn N --window W` and `arcana trace rebuild --window`).
 * Needs a kernel (the builder runs in Python); it records nothing. All text goes in as text nodes.
 */

import { clear, collapsible, h, pre } from './dom';
import { fmtInt } from './format';
import { KernelReply, WhatIfChange, WhatIfReply, WhatIfRequest } from './schema.gen';
import { TurnBundle } from './types';

export const STRATEGIES = ['auto', 'passthrough', 'tail_preserve', 'aggressive_truncate', 'llm_summarize'];

/** The kernel's answer to a `whatif` request (generated from `schema/frontend.py`). */
export type WhatIfAnswer = WhatIfReply;

export interface Requester {
  request(data: WhatIfRequest): Promise<KernelReply | null>;
}

function stateText(s: WhatIfChange['before']): string {
  if (!s) {
    return '—';
  }
  const tokens = typeof s.tokens === 'number' ? s.tokens : 0;
  return `${String(s.outcome ?? '')}${s.fidelity ? ' ' + String(s.fidelity) : ''} · ${fmtInt(tokens)} tok`;
}

/** The answer as DOM: a summary line, the rows that changed, notes, and the rebuilt prompt (collapsed). */
export function whatIfResult(a: WhatIfAnswer): HTMLElement {
  if (!a.ok) {
    return h('div', { class: 'arcana-warn arcana-whatif-result' }, a.message ?? 'the kernel could not rebuild this turn');
  }
  const s = (a.settings ?? {}) as { strategy?: string; total_window?: number; response_reserve?: number; mode?: string; relevance?: string };
  const changes = a.changes ?? [];
  const rows = changes.map(c => h('tr', {},
    h('td', { class: 'arcana-num' }, String(c.index)), h('td', {}, c.role), h('td', {}, c.source ?? 'history'),
    h('td', {}, c.change), h('td', {}, stateText(c.before)), h('td', {}, '→ ' + stateText(c.after))));
  const messages = a.messages ?? [];
  return h('div', { class: 'arcana-whatif-result' },
    h('div', { class: 'arcana-whatif-summary' },
      `Window ${fmtInt(s.total_window ?? 0)}, reserve ${fmtInt(s.response_reserve ?? 0)}, ${s.strategy ?? ''}`
      + (s.mode ? `, ${s.mode} mode` : '') + (s.relevance ? `, ${s.relevance} relevance` : '') + ': '
      + `${fmtInt(a.recorded_tokens ?? 0)} tokens sent → ${fmtInt(a.tokens ?? 0)} rebuilt · `
      + `${changes.length} row${changes.length === 1 ? '' : 's'} changed`
      + (a.counterfactual ? '' : ' (the recorded settings)')
      + (a.verified ? ' · the recorded prompt was reproduced first (digest verified)' : ' · the recorded prompt could not be reproduced')),
    changes.length
      ? h('table', { class: 'arcana-whatif-table' },
        h('thead', {}, h('tr', {}, ...['#', 'role', 'source', 'change', 'as sent', 'what if'].map(t => h('th', {}, t)))),
        h('tbody', {}, ...rows))
      : h('div', { class: 'arcana-muted' }, 'Every message is decided as it was.'),
    ...(a.notes ?? []).map(n => h('div', { class: 'arcana-muted' }, n)),
    collapsible(`Rebuilt prompt (${messages.length} message${messages.length === 1 ? '' : 's'}${a.messages_left_out ? `, ${a.messages_left_out} more not shown` : ''})`,
      () => h('div', {}, ...messages.map(m => h('div', { class: 'arcana-msg' }, h('div', { class: 'arcana-msg-head' }, m.role ?? ''), pre(m.content ?? ''))))));
}

/** The sections drawn, per kernel link (a restarted kernel is a new link: new sections). */
const SECTIONS = new WeakMap<Requester, Map<string, HTMLElement>>();
const MAX_SECTIONS = 200;

/**
 * The what-if form under a turn: window, reserve, strategy and a Rebuild button. One per turn: the
 * inspector is drawn again when the turn's detail arrives from the trace, and what the user typed
 * (or the answer shown) must survive that.
 */
export function whatIfSection(b: TurnBundle, live: Requester): HTMLElement {
  const key = `${b.run_id}\u0000${b.agent}\u0000${b.turn}`;
  let drawn = SECTIONS.get(live);
  if (!drawn) {
    drawn = new Map();
    SECTIONS.set(live, drawn);
  }
  const kept = drawn.get(key);
  if (kept) {
    return kept;
  }
  const section = buildSection(b, live);
  if (drawn.size >= MAX_SECTIONS) {
    drawn.delete(drawn.keys().next().value as string);
  }
  drawn.set(key, section);
  return section;
}

function buildSection(b: TurnBundle, live: Requester): HTMLElement {
  const steps = b.steps ?? [];
  const step = steps.length ? steps[steps.length - 1] : null;
  const budget = step?.budget;
  const window = h('input', { type: 'number', class: 'arcana-whatif-window', min: 256, step: 256, placeholder: String(budget?.total_window ?? ''), 'aria-label': 'Window (tokens)' }) as HTMLInputElement;
  const reserve = h('input', { type: 'number', class: 'arcana-whatif-reserve', min: 0, placeholder: String(budget?.response_reserve ?? ''), 'aria-label': 'Reply reserve (tokens)' }) as HTMLInputElement;
  const strategy = h('select', { class: 'arcana-whatif-strategy', 'aria-label': 'Strategy' },
    h('option', { value: '' }, 'as recorded'), ...STRATEGIES.map(x => h('option', { value: x }, x))) as HTMLSelectElement;
  const mode = h('select', { class: 'arcana-whatif-mode', 'aria-label': 'Mode' },
    h('option', { value: '' }, 'as recorded'), h('option', { value: 'classic' }, 'classic'),
    h('option', { value: 'adaptive' }, 'adaptive')) as HTMLSelectElement;
  const relevance = h('select', { class: 'arcana-whatif-relevance', 'aria-label': 'Relevance' },
    h('option', { value: '' }, 'as recorded'), h('option', { value: 'lexical' }, 'lexical (BM25)'),
    h('option', { value: 'semantic' }, 'semantic (embeddings)')) as HTMLSelectElement;
  const run = h('button', { type: 'button', class: 'arcana-btn arcana-whatif-run' }, 'Rebuild');
  const out = h('div', { class: 'arcana-whatif-out', role: 'status', 'aria-live': 'polite' });
  run.addEventListener('click', () => {
    run.setAttribute('disabled', '');
    clear(out);
    out.appendChild(h('div', { class: 'arcana-muted' }, 'Rebuilding in the kernel…'));
    const request: WhatIfRequest = {
      type: 'whatif', run_id: String(b.run_id), agent: b.agent ?? null, turn: Number(b.turn), step: step?.step ?? 0,
      window: window.value || null, reserve: reserve.value || null, strategy: strategy.value || null,
      mode: mode.value || null, relevance: relevance.value || null
    };
    void live.request(request).then(r => {
      run.removeAttribute('disabled');
      clear(out);
      out.appendChild(whatIfResult((r ?? { ok: false, message: 'no answer from the kernel' }) as WhatIfAnswer));
    });
  });
  const form = h('div', { class: 'arcana-whatif' },
    h('div', { class: 'arcana-muted' }, 'What would this turn have sent with other settings? The kernel rebuilds it from the trace; nothing is recorded.'),
    h('div', { class: 'arcana-whatif-controls', 'data-lm-suppress-shortcuts': 'true' },
      h('label', {}, 'Window ', window), h('label', {}, 'Reserve ', reserve), h('label', {}, 'Strategy ', strategy),
      h('label', {}, 'Mode ', mode), h('label', {}, 'Relevance ', relevance), run),
    out);
  return collapsible('What if…', () => form, false, 'arcana-whatif-section');
}
