/**
 * The turn inspector: what the MIME renderer shows for an `application/vnd.arcana.turn+json`
 * bundle. The MIME renderer shows the reply with JupyterLab's Markdown renderer (./mime); without
 * it (`replyShown` unset) the reply is shown here as text. Below it a one-line summary button expands the full
 * inspector (budget bars, decision table, pins, tiers, memories, primitives, tools, usage, errors).
 */

import { budgetBars, decisionTable, list, outcomeSummary } from './decisionview';
import { type Child, clear, collapsible, h, pre, uid } from './dom';
import { fmtCost, fmtCounting, fmtInt, fmtLatency, fmtPct, fmtScore, preview, valueText } from './format';
import { changeLabel, isChange } from './labels';
import type { ActionRequest, KernelReply, LiveAction, StateRequest, WhatIfRequest } from './schema.gen';
import type { TurnView } from './schema.gen';
import { stepOf } from './source';
import { MessageDecision, MessageRecord, Pin, StandingItem, StateObject, TurnBundle, TurnStep } from './types';
import { sentPromptSection } from './sentview';
import { whatIfSection } from './whatif';

/** The turn as Python read it from the trace, when the inspector opens (the notebook keeps a summary). */
export interface TurnDetail {
  path: string;
  turn: TurnView;
}

/** A row's identity within one build (its source, index and section): how a bundle row finds the trace's. */
function rowKey(d: MessageDecision): string {
  return `${d.source ?? 'history'}\u0000${d.index}\u0000${d.section ?? ''}`;
}

/**
 * The kernel's side of a live session, when one is connected: the `arcana` comm (JupyterLab
 * extension, ./hub) or the widget's custom messages (./widget). Typed by ./schema.gen.
 */
export interface LiveSession {
  request(data: StateRequest | ActionRequest | WhatIfRequest): Promise<KernelReply | null>;
}

/** What the renderer adds to a bundle: where its detail is, and the live session. */
export interface TurnContext {
  loadDetail?: () => Promise<TurnDetail | null>;
  live?: LiveSession | null;
  /** The reply is rendered by the caller (JupyterLab's Markdown renderer): do not repeat it as text. */
  replyShown?: boolean;
}

/** `this turn: 1,234 in / 56 out tokens, $0.0012 · session: 3 turns, 4,567 in / 89 out, $0.0040` */
export function usageText(b: TurnBundle): string {
  const u = b.usage ?? {};
  let text = `this turn: ${fmtInt(u.input_tokens ?? 0)} in / ${fmtInt(u.output_tokens ?? 0)} out tokens, ${fmtCost(b.cost_usd ?? 0)}`;
  const s = b.session;
  if (s && typeof s === 'object') {
    const n = Number(s.turns ?? 0);
    text += ` · session: ${n} turn${n === 1 ? '' : 's'}, ${fmtInt(s.input_tokens ?? 0)} in / ${fmtInt(s.output_tokens ?? 0)} out, ${fmtCost(s.cost_usd ?? 0)}`;
  }
  return text;
}

function asArray<T>(v: T[] | null | undefined): T[] {
  return Array.isArray(v) ? v : [];
}

/** The one-line summary shown while the inspector is collapsed. */
export function summaryLine(b: TurnBundle): string {
  const step = lastStep(b);
  const decisions = asArray(step?.decision?.decisions);
  const parts = [`arcana · turn ${b.turn}`];
  if (b.agent && b.agent !== 'main') {
    parts.push(`agent ${b.agent}`);
  }
  if (b.model) {
    parts.push(String(b.model));
  }
  parts.push(String(b.status));
  parts.push(usageText(b));
  if (step?.budget) {
    parts.push(`${fmtInt(step.budget.used)} / ${fmtInt(step.budget.available)} tokens (${fmtPct(step.budget.utilization)})`);
  }
  if (decisions.length) {
    parts.push(outcomeSummary(decisions));
  }
  const steps = asArray(b.steps).length;
  if (steps > 1) {
    parts.push(`${steps} LLM calls`);
  }
  const pins = asArray(b.pins).length;
  if (pins) {
    parts.push(`${pins} pin${pins > 1 ? 's' : ''}`);
  }
  const mems = asArray(b.memories).length;
  if (mems) {
    parts.push(`${mems} memor${mems > 1 ? 'ies' : 'y'}`);
  }
  const tools = asArray(b.tool_calls).length;
  if (tools) {
    parts.push(`${tools} tool call${tools > 1 ? 's' : ''}`);
  }
  const errs = asArray(b.errors).length;
  if (errs) {
    parts.push(`${errs} error${errs > 1 ? 's' : ''}`);
  }
  return parts.join(' · ');
}

function lastStep(b: TurnBundle): TurnStep | null {
  const steps = asArray(b.steps);
  return steps.length ? steps[steps.length - 1] : null;
}

function stepView(b: TurnBundle, step: TurnStep, detail: TurnDetail | null, live: LiveSession | null = null): HTMLElement {
  const decisions = asArray(step.decision?.decisions);
  const pins = asArray(b.pins);
  const msgs = asArray(step.messages);
  const traced = stepOf(detail?.turn, step.step);
  const snapshot = (traced?.sent?.messages ?? null) as MessageRecord[] | null;
  const originals = new Map<string, MessageRecord | null>();
  (traced?.decision?.decisions ?? []).forEach((d, i) => originals.set(rowKey(d), (traced?.originals?.[i] ?? null) as MessageRecord | null));
  const at = (pos: number | null | undefined): MessageRecord | null => {
    if (typeof pos !== 'number' || pos < 0) {
      return null;
    }
    if (snapshot && pos < snapshot.length) {
      return snapshot[pos];
    }
    const m = pos < msgs.length ? msgs[pos] : null;
    return m && (m as any).in_trace ? null : m;
  };
  const table = decisionTable(`Context decisions, step ${step.step}`, d => {
    const fromTrace = originals.get(rowKey(d)) ?? null;
    // Kept at L0, what was sent is the original; the notebook keeps only the compressed texts.
    const same = d.outcome === 'kept' && (d.fidelity === 'L0' || !d.fidelity) && !d.recalled;
    let sent = at(d.position);
    if (!sent && same && fromTrace) {
      sent = fromTrace;
    }
    const anchor = at(d.anchor_position);
    if (d.source === 'pin') {
      const p = pins.find(x => x.pin_id === d.section);
      return { original: fromTrace ?? (p ? { role: d.role, content: p.content ?? null } : sent), sent, anchor };
    }
    if (d.source === 'input' && b.input !== undefined && !fromTrace) {
      return { original: { role: 'user', content: b.input ?? null }, sent, anchor };
    }
    return {
      original: fromTrace ?? (same ? sent : null),
      sent,
      anchor,
      originalMissing: detail ? 'not recorded in the trace' : b.compact ? 'in the run\'s trace (loading…)' : 'in the run\'s trace (open it in the trace viewer)'
    };
  });
  table.setRows(decisions);
  const dec = step.decision;
  const head = dec
    ? `Strategy ${dec.strategy}${dec.requested_strategy && dec.requested_strategy !== dec.strategy ? ` (requested ${dec.requested_strategy})` : ''} · input ${fmtPct(dec.utilization_before)} of the budget before the build` +
      (step.request_digest ? ` · digest ${step.request_digest}` : '')
    : 'No decision recorded for this step.';
  const counting = fmtCounting(step.counting);
  const notes = asArray(dec?.notes);
  return h(
    'div',
    { class: 'arcana-step' },
    budgetBars(step.report, step.budget, decisions),
    // what the budget went to and cost, in Python's words (runtime/bundle.py explain_step)
    ...asArray(step.explain).map(line => h('div', { class: 'arcana-muted arcana-explain' }, String(line))),
    h('div', { class: 'arcana-muted arcana-strategy' }, head),
    counting ? h('div', { class: 'arcana-muted arcana-counting' }, counting) : null,
    table.node,
    notes.length ? h('div', { class: 'arcana-notes' }, h('strong', {}, 'Notes: '), notes.join(' · ')) : null,
    dec?.summary ? collapsible('Summary written by the summariser', () => pre(dec.summary)) : null,
    // The prompt as sent: from the trace beside the notebook (prompt_sent events), no kernel needed.
    detail
      ? sentPromptSection(traced, b.run_id, b.turn, false, live
        ? () => live.request({ type: 'whatif', run_id: String(b.run_id), agent: b.agent ?? null, turn: Number(b.turn), step: step.step,
          window: null, reserve: null, strategy: null, mode: null, relevance: null })
        : undefined)
      : collapsible('Prompt as sent', () => h('div', { class: 'arcana-muted' },
        b.trace_path ? 'In the run\'s trace (loading…).' : 'In the run\'s trace (open it in the trace viewer).'), false, 'arcana-prompt-section')
  );
}

function stateObject(o: StateObject): HTMLElement {
  return h(
    'div',
    { class: 'arcana-state' + (o.retracted ? ' arcana-retracted' : '') },
    h('span', { class: 'arcana-badge' }, o.kind),
    ' ',
    h('span', { class: 'arcana-mono' }, o.id),
    o.focused ? h('span', { class: 'arcana-badge arcana-badge-focus' }, 'focused') : null,
    o.retracted ? h('span', { class: 'arcana-badge' }, 'retracted') : null,
    o.status ? h('span', { class: 'arcana-badge' }, o.status) : null,
    typeof o.last_touched_turn === 'number' ? h('span', { class: 'arcana-muted' }, ` · turn ${o.last_touched_turn}`) : null,
    h('div', { class: 'arcana-state-summary' }, o.summary ?? ''),
    o.rationale ? h('div', { class: 'arcana-muted' }, `why: ${o.rationale}`) : null,
    o.retracted && o.retract_reason ? h('div', { class: 'arcana-muted' }, `retracted: ${o.retract_reason}`) : null
  );
}

const STANDING_BY: Record<string, string> = { said: 'you said it', added: 'you added it', model: 'the model added it' };
const STANDING_SHOWN: Record<string, string> = {
  full: 'in the prompt in full', short: 'shortened to its first clause to fit the budget',
  cut: 'cut to its first words to fit the budget', folded: 'named by id only to fit the budget'
};

/** One standing instruction: its id, kind, the turn it was given, who, how the prompt showed it, its text. */
export function standingItem(s: StandingItem, ...actions: Child[]): HTMLElement {
  const facts = [`from turn ${s.turn}`, STANDING_BY[s.by] ?? s.by];
  if (s.learned) {
    facts.push('read as standing by the learned reader, not a rule: retract it if it is not one');
  }
  if (s.acknowledged) {
    facts.push('kept because the reply took it up as lasting, not by a rule: retract it if it is not one');
  }
  if (s.shown) {
    facts.push(STANDING_SHOWN[s.shown] ?? s.shown);
  }
  if (s.revises) {
    facts.push(`replaces ${s.revises}`);
  }
  if (s.memory_id) {
    facts.push(`kept in memory as ${s.memory_id}`);
  } else if (s.offer_memory) {
    facts.push(`%arcana_standing remember ${s.id} keeps it for the next notebook`);
  }
  return h('div', { class: 'arcana-standing-item', 'data-id': s.id },
    h('span', { class: 'arcana-badge' }, s.kind), ' ',
    h('span', { class: 'arcana-mono' }, s.id),
    h('span', { class: 'arcana-muted arcana-standing-turn' }, ` · ${facts.join(' · ')}`),
    ...actions,
    h('div', { class: 'arcana-standing-text' }, s.text ?? '(text not recorded)'));
}

function body(b: TurnBundle, detail: TurnDetail | null, note: string, live: LiveSession | null): HTMLElement {
  const out = h('div', { class: 'arcana-inspector-body' });
  if (note) {
    out.appendChild(h('div', { class: 'arcana-muted arcana-detail-note' }, note));
  }
  const steps = asArray(b.steps);
  // Step chooser: one build per LLM call of the turn (tool loop).
  const stepHost = h('div', { class: 'arcana-step-host' });
  if (steps.length > 1) {
    const tabs = h('div', { class: 'arcana-tabs', role: 'group', 'aria-label': 'LLM call of this turn' });
    const buttons = steps.map((s, i) => {
      const btn = h('button', { type: 'button', class: 'arcana-tab', 'aria-pressed': 'false' }, `step ${s.step}`);
      btn.addEventListener('click', () => show(i));
      tabs.appendChild(btn);
      return btn;
    });
    const show = (i: number) => {
      buttons.forEach((bt, j) => bt.setAttribute('aria-pressed', String(i === j)));
      clear(stepHost);
      stepHost.appendChild(stepView(b, steps[i], detail, live));
    };
    out.appendChild(tabs);
    out.appendChild(stepHost);
    show(steps.length - 1);
  } else if (steps.length === 1) {
    stepHost.appendChild(stepView(b, steps[0], detail, live));
    out.appendChild(stepHost);
  } else {
    out.appendChild(h('div', { class: 'arcana-muted' }, 'No LLM call recorded for this turn.'));
  }

  if (b.input !== undefined) {
    out.appendChild(collapsible('Input', () => (b.input === null ? h('div', { class: 'arcana-muted' }, 'not recorded (trace_content = none)') : pre(b.input))));
  }

  const pins = asArray(b.pins);
  out.appendChild(
    collapsible(`Pins (${pins.length})`, () =>
      list(pins, p => h('div', { class: 'arcana-pin' },
        h('span', { class: 'arcana-pin-flag' }, '[PIN]'), ' ',
        h('span', { class: 'arcana-mono' }, p.pin_id), p.label ? ` “${p.label}”` : '',
        h('span', { class: 'arcana-muted' }, ` · ${fmtInt(p.tokens)} tokens` + (typeof p.created_turn === 'number' ? ` · since turn ${p.created_turn}` : '') + (typeof p.until_turn === 'number' ? ` · until turn ${p.until_turn}` : '')),
        p.content ? pre(p.content) : null), 'No active pins.'),
      pins.length > 0
    )
  );

  const standing = asArray(b.standing);
  out.appendChild(
    collapsible(`Standing instructions (${standing.length})`, () =>
      list(standing, s => standingItem(s), 'No standing instructions: what you say once and expect to hold ("from now on …", "always …", "I prefer …") is kept here, in your words.'),
    standing.length > 0, 'arcana-standing-section')
  );

  const tiers = b.tiers ?? {};
  const tierCount = (['active', 'soft', 'hard'] as const).reduce((n, t) => n + asArray(tiers[t]).length, 0);
  out.appendChild(
    collapsible(`Adaptive context (${tierCount})`, () =>
      h('div', { class: 'arcana-tiers' },
        ...(['active', 'soft', 'hard'] as const).map(t =>
          h('div', { class: `arcana-tier arcana-tier-${t}` },
            h('div', { class: 'arcana-tier-title' }, `${t} (${asArray(tiers[t]).length})`),
            ...asArray(tiers[t]).map(stateObject)))))
  );

  const changes = asArray(b.state_changes).filter(isChange);
  if (changes.length) {
    out.appendChild(collapsible(`Adaptive-context changes (${changes.length})`, () => list(changes, changeLabel, '')));
  }

  const mems = asArray(b.memories);
  const inDigest = mems.filter(m => m.via === 'digest').length;
  out.appendChild(
    collapsible(`Memories (${inDigest} in the prompt's digest, ${mems.length - inDigest} recalled)`, () =>
      list(mems, m => h('div', {},
        h('span', { class: 'arcana-badge' }, m.via === 'digest' ? 'digest' : 'recalled'), ' ',
        h('span', { class: 'arcana-badge' }, m.kind), ' ', h('span', { class: 'arcana-mono' }, m.id),
        h('span', { class: 'arcana-muted' }, ` · score ${fmtScore(m.score) || '—'}` + (m.scope ? ` · ${Array.isArray(m.scope) ? m.scope.join(', ') : m.scope}` : '')),
        h('div', {}, m.content ?? '(content not recorded)')), 'No memory in the prompt, none recalled.'))
  );

  const prims = asArray(b.primitives);
  out.appendChild(
    collapsible(`Primitive calls (${prims.length})`, () =>
      list(prims, p => h('div', {}, h('strong', {}, p.primitive), ' ', h('span', { class: 'arcana-mono' }, preview(valueText(p.args), 200)), pre(valueText(p.result))), 'No primitive calls.'))
  );

  const tools = asArray(b.tool_calls);
  out.appendChild(
    collapsible(`Tool calls (${tools.length})`, () =>
      list(tools, t => h('div', {},
        h('strong', {}, t.name), t.intercepted ? h('span', { class: 'arcana-badge' }, 'intercepted') : null,
        h('span', { class: t.ok ? 'arcana-ok' : 'arcana-warn' }, t.ok ? ' ok' : ' failed'),
        pre('arguments: ' + valueText(t.arguments)), pre('result: ' + valueText(t.result))), 'No tool calls.'))
  );

  const u = b.usage ?? {};
  out.appendChild(
    h('div', { class: 'arcana-usage' },
      `Usage: ${fmtInt(u.input_tokens)} in (${fmtInt(u.cached_input_tokens)} cached) · ${fmtInt(u.output_tokens)} out · cost ${fmtCost(b.cost_usd)} · latency ${fmtLatency(b.latency_ms, b.model_latency_ms)}`,
      b.trace_path ? h('span', { class: 'arcana-muted' }, ` · trace ${b.trace_path}`) : null,
      h('span', { class: 'arcana-muted' }, ` · run ${b.run_id}`))
  );

  const errs = asArray(b.errors);
  if (errs.length) {
    out.appendChild(
      h('div', { class: 'arcana-errors', role: 'alert' },
        h('strong', {}, `Errors (${errs.length})`),
        list(errs, e => h('div', {}, h('strong', {}, e.type), e.where ? ` in ${e.where}` : '', ': ', e.message), ''))
    );
  }
  if (live && b.status !== 'running') {
    out.appendChild(liveSection(b, live));
    out.appendChild(whatIfSection(b, live));
  }
  return out;
}

/**
 * The session as it is now in the kernel (pins, standing instructions, adaptive-context objects) with the
 * actions a person can take: unpin, retract, remember (a standing instruction, into long-term memory), hydrate. Shown under the session's latest turn while its
 * kernel runs; a reopened notebook without a kernel shows the recorded turn only.
 */
/** The last action's status per turn: an inspector drawn again (a newer state came) keeps what it said. */
const liveStatus = new Map<string, string>();

function liveSection(b: TurnBundle, live: LiveSession): HTMLElement {
  const host = h('section', { class: 'arcana-live', 'aria-label': 'Live session actions' });
  const key = `${b.run_id}/${b.agent}/${b.turn}`;
  const status = h('div', { class: 'arcana-live-status', role: 'status', 'aria-live': 'polite' });
  status.textContent = liveStatus.get(key) ?? '';
  const say = (text: string) => {
    liveStatus.set(key, text);
    for (const el of Array.from(document.querySelectorAll<HTMLElement>('.arcana-live-status'))) {
      if (el.dataset.key === key) el.textContent = text;  // this turn's status wherever it is drawn now
    }
    status.textContent = text;
  };
  status.dataset.key = key;
  const items = h('div', { class: 'arcana-live-items' });
  const show = (state: Record<string, any> | null) => {  // a LiveState or an ActionReply
    clear(items);
    if (!state || !state.live) {
      host.hidden = true;
      return;
    }
    if (typeof state.turn === 'number' && state.turn !== b.turn) {
      host.hidden = true; // the actions live under the session's latest turn
      return;
    }
    host.hidden = false;
    const button = (label: string, action: LiveAction, target: string) => {
      const btn = h('button', { type: 'button', class: 'arcana-btn arcana-action', 'data-action': action, 'data-target': target }, label);
      btn.addEventListener('click', () => {
        btn.setAttribute('disabled', '');
        say(`${action} ${target}…`);
        void live.request({ type: 'action', action, target, run_id: b.run_id, agent: b.agent }).then(r => {
          const answer = r && 'ok' in r ? r : null; // an ActionReply, or an ErrorReply
          say(answer ? String(answer.message ?? (answer.ok ? 'done' : 'failed')) : 'no answer from the kernel');
          status.classList.toggle('arcana-warn', !answer || answer.ok === false);
          show(r && 'live' in r && r.live !== undefined && r.live !== null ? r : null);
        });
      });
      return btn;
    };
    const pins = asArray(state.pins as Pin[]);
    items.appendChild(h('div', { class: 'arcana-live-row' }, h('strong', {}, 'Pins: '),
      pins.length ? null : h('span', { class: 'arcana-muted' }, 'none'),
      ...pins.map(p => h('span', { class: 'arcana-live-item' }, h('span', { class: 'arcana-mono' }, p.pin_id), p.label ? ` “${p.label}” ` : ' ', button('unpin', 'unpin', p.pin_id)))));
    const standing = asArray(state.standing as StandingItem[]);
    if (standing.length) {
      items.appendChild(h('div', { class: 'arcana-live-row arcana-live-standing' }, h('strong', {}, 'Standing instructions: '),
        ...standing.map(s => standingItem(s, ' ', button('retract', 'retract', s.id),
          s.offer_memory ? button('remember', 'remember', s.id) : null))));
    }
    const tiers = (state.tiers ?? {}) as Partial<Record<string, StateObject[]>>;
    for (const tier of ['active', 'soft', 'hard']) {
      const objs = asArray(tiers[tier]).filter(o => !o.retracted && !o.standing);
      if (!objs.length) {
        continue;
      }
      items.appendChild(h('div', { class: 'arcana-live-row' }, h('strong', {}, `${tier}: `),
        ...objs.map(o => h('span', { class: 'arcana-live-item' }, h('span', { class: 'arcana-mono' }, o.id), ` ${preview(o.summary ?? '', 60)} `,
          tier !== 'active' ? button('hydrate', 'hydrate', o.id) : null, button('retract', 'retract', o.id)))));
    }
  };
  host.appendChild(h('div', { class: 'arcana-live-title' }, h('strong', {}, 'Live session'), h('span', { class: 'arcana-muted' }, ' · the kernel is running this session: actions are traced like the model\'s tool calls')));
  host.appendChild(items);
  host.appendChild(status);
  host.hidden = true;
  void live.request({ type: 'state', run_id: b.run_id, agent: b.agent }).then(r => show(r && r.type === 'state' ? r : null));
  return host;
}

/** Render a bundle into `host` (cleared first). Collapsed by default. */
export function renderTurn(host: HTMLElement, b: TurnBundle, expanded = false, ctx: TurnContext = {}): void {
  clear(host);
  if (!b || typeof b !== 'object') {
    host.appendChild(h('div', { class: 'arcana-warn' }, 'arcana: this output holds no turn data.'));
    return;
  }
  const root = h('div', { class: `arcana-turn arcana-status-${String(b.status).replace(/[^a-z]/g, '')}` });
  if (!ctx.replyShown && typeof b.reply === 'string' && b.reply.length) {
    root.appendChild(h('div', { class: 'arcana-reply arcana-reply-text' }, b.reply));
  }
  if (b.status === 'running') {
    root.appendChild(h('div', { class: 'arcana-muted arcana-progress', role: 'status' }, b.progress ? `The model is answering… (${b.progress})` : 'The model is answering…'));
  }
  const bodyId = uid('arcana-inspector');
  const toggle = h('button', { type: 'button', class: 'arcana-summary', 'aria-expanded': 'false', 'aria-controls': bodyId },
    h('span', { class: 'arcana-caret', 'aria-hidden': 'true' }), summaryLine(b));
  const holder = h('div', { class: 'arcana-inspector', id: bodyId });
  let built = false;
  const fill = (detail: TurnDetail | null, note: string) => {
    clear(holder);
    try {
      holder.appendChild(body(b, detail, note, ctx.live ?? null));
    } catch (err) {
      // Data from a newer or broken producer: say so instead of showing nothing.
      holder.appendChild(h('div', { class: 'arcana-warn' }, `arcana: could not render this turn: ${String((err as Error)?.message ?? err)}`));
    }
  };
  const set = (open: boolean) => {
    toggle.setAttribute('aria-expanded', String(open));
    holder.hidden = !open;
    if (open && !built) {
      built = true;
      const load = b.compact && b.status !== 'running' ? ctx.loadDetail : undefined;
      fill(null, load ? 'Reading the prompt texts from the trace…' : '');
      if (load) {
        void load().then(
          detail => fill(detail, detail ? `Detail from ${detail.path}` : `The trace ${b.trace_path ?? ''} is not beside the notebook: the prompt texts are not shown (the notebook keeps a summary).`),
          err => fill(null, `Could not read the trace: ${String((err as Error)?.message ?? err)}`)
        );
      }
    }
  };
  toggle.addEventListener('click', () => set(toggle.getAttribute('aria-expanded') !== 'true'));
  set(expanded);
  root.appendChild(toggle);
  root.appendChild(holder);
  host.appendChild(root);
}
