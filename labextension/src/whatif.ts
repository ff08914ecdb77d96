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
  // A dropped message a section carries says where its evidence went: `dropped → checkpoint`.
  const where = typeof s.where === 'string' && s.where ? ` → ${s.where.replace(/_/g, ' ')}` : '';
  return `${String(s.outcome ?? '')}${where}${s.fidelity ? ' ' + String(s.fidelity) : ''} · ${fmtInt(tokens)} tok`
    + (typeof s.reason === 'string' && s.reason ? ` · ${s.reason}` : '');
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
      // the kernel says where the tokens went (jupyter/whatif.py tokens_line); an older kernel did not
      + (a.tokens_line ?? `${fmtInt(a.recorded_tokens ?? 0)} tokens sent → ${fmtInt(a.tokens ?? 0)} rebuilt · `
        + `${changes.length} row${changes.length === 1 ? '' : 's'} changed`)
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

/** The turn (and LLM call) a what-if form rebuilds, with the recorded window and reserve as placeholders. */
export interface WhatIfTarget {
  run_id: string;
  agent: string | null;
  turn: number;
  step: number;
  total_window?: number | null;
  response_reserve?: number | null;
}

/** What the form says, and its controls' tooltip, when no kernel can answer (a reopened notebook). */
export const NEEDS_KERNEL = 'A kernel is needed: the what-if rebuild runs in Python. Start the notebook\'s kernel and run '
  + '%load_ext arcana_jupyter, then come back to this turn.';

/** The sections drawn, per kernel link (a restarted kernel is a new link: new sections). */
const SECTIONS = new WeakMap<Requester, Map<string, HTMLElement>>();
const MAX_SECTIONS = 200;

/** The what-if target of an inspector's turn bundle: its last LLM call. */
export function targetOf(b: TurnBundle): WhatIfTarget {
  const steps = b.steps ?? [];
  const step = steps.length ? steps[steps.length - 1] : null;
  return {
    run_id: String(b.run_id), agent: b.agent ?? null, turn: Number(b.turn), step: step?.step ?? 0,
    total_window: step?.budget?.total_window ?? null, response_reserve: step?.budget?.response_reserve ?? null
  };
}

/** The what-if form under an inspector's turn (see {@link whatIfFor}). */
export function whatIfSection(b: TurnBundle, live: Requester): HTMLElement {
  return whatIfFor(targetOf(b), live);
}

/**
 * The what-if form of one turn: window, reserve, strategy, mode, relevance and a Rebuild button. One
 * per turn and kernel link: the inspector is drawn again when the turn's detail arrives from the
 * trace, the replay when the scrubber comes back to a turn, and what the user typed (or the answer
 * shown) must survive that. Without a kernel (`live` null) the controls are there but disabled, and
 * say why.
 */
export function whatIfFor(target: WhatIfTarget, live: Requester | null, extraClass = ''): HTMLElement {
  if (!live) {
    return buildSection(target, null, extraClass);
  }
  const key = `${target.run_id}\u0000${target.agent}\u0000${target.turn}\u0000${target.step}\u0000${extraClass}`;
  let drawn = SECTIONS.get(live);
  if (!drawn) {
    drawn = new Map();
    SECTIONS.set(live, drawn);
  }
  const kept = drawn.get(key);
  if (kept) {
    return kept;
  }
  const section = buildSection(target, live, extraClass);
  if (drawn.size >= MAX_SECTIONS) {
    drawn.delete(drawn.keys().next().value as string);
  }
  drawn.set(key, section);
  return section;
}

function buildSection(target: WhatIfTarget, live: Requester | null, extraClass: string): HTMLElement {
  const off = live ? {} : { disabled: true, title: NEEDS_KERNEL };
  const window = h('input', { type: 'number', class: 'arcana-whatif-window', min: 256, step: 256, placeholder: String(target.total_window ?? ''), 'aria-label': 'Window (tokens)', ...off }) as HTMLInputElement;
  const reserve = h('input', { type: 'number', class: 'arcana-whatif-reserve', min: 0, placeholder: String(target.response_reserve ?? ''), 'aria-label': 'Reply reserve (tokens)', ...off }) as HTMLInputElement;
  const strategy = h('select', { class: 'arcana-whatif-strategy', 'aria-label': 'Strategy', ...off },
    h('option', { value: '' }, 'as recorded'), ...STRATEGIES.map(x => h('option', { value: x }, x))) as HTMLSelectElement;
  const mode = h('select', { class: 'arcana-whatif-mode', 'aria-label': 'Mode', ...off },
    h('option', { value: '' }, 'as recorded'), h('option', { value: 'classic' }, 'classic'),
    h('option', { value: 'adaptive' }, 'adaptive')) as HTMLSelectElement;
  const relevance = h('select', { class: 'arcana-whatif-relevance', 'aria-label': 'Relevance', ...off },
    h('option', { value: '' }, 'as recorded'), h('option', { value: 'lexical' }, 'lexical (BM25)'),
    h('option', { value: 'semantic' }, 'semantic (embeddings)')) as HTMLSelectElement;
  const run = h('button', { type: 'button', class: 'arcana-btn arcana-whatif-run', ...off }, 'Rebuild');
  const out = h('div', { class: 'arcana-whatif-out', role: 'status', 'aria-live': 'polite' });
  if (live) {
    run.addEventListener('click', () => {
      run.setAttribute('disabled', '');
      clear(out);
      out.appendChild(h('div', { class: 'arcana-muted' }, 'Rebuilding in the kernel…'));
      const request: WhatIfRequest = {
        type: 'whatif', run_id: target.run_id, agent: target.agent, turn: target.turn, step: target.step,
        window: window.value || null, reserve: reserve.value || null, strategy: strategy.value || null,
        mode: mode.value || null, relevance: relevance.value || null
      };
      void live.request(request).then(r => {
        run.removeAttribute('disabled');
        clear(out);
        out.appendChild(whatIfResult((r ?? { ok: false, message: 'no answer from the kernel' }) as WhatIfAnswer));
      });
    });
  } else {
    out.appendChild(h('div', { class: 'arcana-warn arcana-whatif-needs-kernel' }, NEEDS_KERNEL));
  }
  const form = h('div', { class: 'arcana-whatif' },
    h('div', { class: 'arcana-muted' }, `What would turn ${target.turn}${target.step ? ` (step ${target.step})` : ''} have sent with other settings? `
      + 'The kernel rebuilds it from the trace; nothing is recorded.'),
    h('div', { class: 'arcana-whatif-controls', 'data-lm-suppress-shortcuts': 'true' },
      h('label', {}, 'Window ', window), h('label', {}, 'Reserve ', reserve), h('label', {}, 'Strategy ', strategy),
      h('label', {}, 'Mode ', mode), h('label', {}, 'Relevance ', relevance), run),
    out);
  return collapsible(live ? 'What if…' : 'What if… (needs a kernel)', () => form, false, ('arcana-whatif-section ' + extraClass).trim());
}
