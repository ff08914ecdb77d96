/**
 * The turn inspector: what the MIME renderer shows for an `application/vnd.arcana.turn+json`
 * bundle. The reply is shown as text; below it a one-line summary button expands the full
 * inspector (budget bars, decision table, pins, tiers, memories, primitives, tools, usage, errors).
 */

import { budgetBars, decisionTable, list, outcomeSummary } from './decisionview';
import { clear, collapsible, h, pre, uid } from './dom';
import { fmtCost, fmtInt, fmtMs, fmtPct, fmtScore, preview, valueText } from './format';
import { MessageDecision, StateObject, TurnBundle, TurnStep } from './types';

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

function stepView(b: TurnBundle, step: TurnStep): HTMLElement {
  const decisions = asArray(step.decision?.decisions);
  const pins = asArray(b.pins);
  const msgs = asArray(step.messages);
  const at = (pos: number | null | undefined) => (typeof pos === 'number' && pos >= 0 && pos < msgs.length ? msgs[pos] : null);
  const sentAt = (d: MessageDecision) => at(d.position);
  const table = decisionTable(`Context decisions, step ${step.step}`, d => {
    const sent = sentAt(d);
    const anchor = at(d.anchor_position);
    if (d.source === 'pin') {
      const p = pins.find(x => x.pin_id === d.section);
      return { original: p ? { role: d.role, content: p.content ?? null } : sent, sent, anchor };
    }
    if (d.source === 'input' && b.input !== undefined) {
      return { original: { role: 'user', content: b.input ?? null }, sent, anchor };
    }
    // Kept at L0, what was sent is the original; otherwise the original is in the run's trace.
    const same = d.outcome === 'kept' && d.fidelity === 'L0' && !d.recalled;
    return {
      original: same ? sent : null,
      sent,
      anchor,
      originalMissing: 'in the run\'s trace (open it in the trace viewer)'
    };
  });
  table.setRows(decisions);
  const dec = step.decision;
  const head = dec
    ? `Strategy ${dec.strategy}${dec.requested_strategy && dec.requested_strategy !== dec.strategy ? ` (requested ${dec.requested_strategy})` : ''} · input ${fmtPct(dec.utilization_before)} of the budget before the build` +
      (step.request_digest ? ` · digest ${step.request_digest}` : '')
    : 'No decision recorded for this step.';
  const notes = asArray(dec?.notes);
  return h(
    'div',
    { class: 'arcana-step' },
    budgetBars(step.report, step.budget, decisions),
    h('div', { class: 'arcana-muted arcana-strategy' }, head),
    table.node,
    notes.length ? h('div', { class: 'arcana-notes' }, h('strong', {}, 'Notes: '), notes.join(' · ')) : null,
    dec?.summary ? collapsible('Summary written by the summariser', () => pre(dec.summary)) : null
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

function body(b: TurnBundle): HTMLElement {
  const out = h('div', { class: 'arcana-inspector-body' });
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
      stepHost.appendChild(stepView(b, steps[i]));
    };
    out.appendChild(tabs);
    out.appendChild(stepHost);
    show(steps.length - 1);
  } else if (steps.length === 1) {
    stepHost.appendChild(stepView(b, steps[0]));
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

  const changes = asArray(b.state_changes);
  if (changes.length) {
    out.appendChild(
      collapsible(`Adaptive-context changes (${changes.length})`, () =>
        list(changes, c => c.event_type === 'context_action'
          ? `${c.action ?? 'action'} ${c.object_id ?? ''} ${c.kind ?? ''}`.trim()
          : `${c.object_id ?? '?'} (${c.kind ?? '?'}): ${c.from_tier ?? '—'} → ${c.to_tier ?? '—'}${c.cause ? ' · ' + c.cause : ''}`, ''))
    );
  }

  const mems = asArray(b.memories);
  out.appendChild(
    collapsible(`Memories recalled (${mems.length})`, () =>
      list(mems, m => h('div', {},
        h('span', { class: 'arcana-badge' }, m.kind), ' ', h('span', { class: 'arcana-mono' }, m.id),
        h('span', { class: 'arcana-muted' }, ` · score ${fmtScore(m.score) || '—'}` + (m.scope ? ` · ${Array.isArray(m.scope) ? m.scope.join(', ') : m.scope}` : '')),
        h('div', {}, m.content ?? '(content not recorded)')), 'No memories recalled.'))
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
      `Usage: ${fmtInt(u.input_tokens)} in (${fmtInt(u.cached_input_tokens)} cached) · ${fmtInt(u.output_tokens)} out · cost ${fmtCost(b.cost_usd)} · latency ${fmtMs(b.latency_ms)}`,
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
  return out;
}

/** Render a bundle into `host` (cleared first). Collapsed by default. */
export function renderTurn(host: HTMLElement, b: TurnBundle, expanded = false): void {
  clear(host);
  if (!b || typeof b !== 'object') {
    host.appendChild(h('div', { class: 'arcana-warn' }, 'arcana: this output holds no turn data.'));
    return;
  }
  const root = h('div', { class: `arcana-turn arcana-status-${String(b.status).replace(/[^a-z]/g, '')}` });
  if (typeof b.reply === 'string' && b.reply.length) {
    root.appendChild(h('div', { class: 'arcana-reply' }, b.reply));
  } else if (b.status === 'running') {
    root.appendChild(h('div', { class: 'arcana-muted' }, 'The model is answering…'));
  }
  const bodyId = uid('arcana-inspector');
  const toggle = h('button', { type: 'button', class: 'arcana-summary', 'aria-expanded': 'false', 'aria-controls': bodyId },
    h('span', { class: 'arcana-caret', 'aria-hidden': 'true' }), summaryLine(b));
  const holder = h('div', { class: 'arcana-inspector', id: bodyId });
  let built = false;
  const set = (open: boolean) => {
    toggle.setAttribute('aria-expanded', String(open));
    holder.hidden = !open;
    if (open && !built) {
      built = true;
      try {
        holder.appendChild(body(b));
      } catch (err) {
        // Data from a newer or broken producer: say so instead of showing nothing.
        holder.appendChild(h('div', { class: 'arcana-warn' }, `arcana: could not render this turn: ${String((err as Error)?.message ?? err)}`));
      }
    }
  };
  toggle.addEventListener('click', () => set(toggle.getAttribute('aria-expanded') !== 'true'));
  set(expanded);
  root.appendChild(toggle);
  root.appendChild(holder);
  host.appendChild(root);
}
