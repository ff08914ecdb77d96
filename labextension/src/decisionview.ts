/**
 * The pieces the inspector and the trace viewer share: the decision table, the budget bars and
 * small lists. All text goes in as text nodes.
 */

import { Child, h, pre } from './dom';
import { fmtInt, fmtPct, fmtScore } from './format';
import { VirtualTable } from './table';
import { outcomeLabel, outcomeTitle, rowFlag, sourceLabel } from './labels';
import { BudgetSnapshot, ContextReport, LAYERS, MessageDecision, MessageRecord, OUTCOMES } from './types';

/** What the detail pane of a decision row shows: the original message and what was sent. */
export interface MessageTexts {
  original: MessageRecord | null;
  sent: MessageRecord | null;
  /** For a recalled message: what stayed in its in-order slot (anchor_position). */
  anchor?: MessageRecord | null;
  /** What to say when the original is not available. */
  originalMissing?: string;
  note?: string;
}

const OUTCOME_RANK: Record<string, number> = { kept: 0, compressed: 1, summarized: 2, dropped: 3 };

function messageBlock(title: string, m: MessageRecord | null, missing = 'not recorded'): HTMLElement {
  const parts: Child[] = [h('div', { class: 'arcana-msg-head' }, title, m ? ` · ${m.role}${m.name ? ' (' + m.name + ')' : ''}` : '')];
  if (!m) {
    parts.push(h('div', { class: 'arcana-muted' }, missing));
  } else {
    parts.push(m.content === null ? h('div', { class: 'arcana-muted' }, 'content not recorded (trace_content = none)') : pre(m.content));
    for (const tc of m.tool_calls ?? []) {
      const name = tc.function?.name ?? tc.name ?? '?';
      const args = tc.function?.arguments ?? tc.arguments ?? '';
      parts.push(pre(`→ tool call ${name}(${args})`, 'arcana-pre arcana-toolcall'));
    }
  }
  return h('div', { class: 'arcana-msg' }, ...parts);
}

/** The decision table (virtualised, sortable, rows expand to the message text). */
export function decisionTable(
  label: string,
  texts: (d: MessageDecision) => MessageTexts,
  maxHeight = 360
): VirtualTable<MessageDecision> {
  return new VirtualTable<MessageDecision>({
    label,
    maxHeight,
    detailHeight: 280,
    rowClass: d => `arcana-outcome-${d.outcome}` + (d.pinned ? ' arcana-pinned' : ''),
    emptyText: 'No decisions recorded for this build.',
    columns: [
      { id: 'index', label: '#', width: '3.5em', cell: d => String(d.index), sortValue: d => d.index, className: 'arcana-num' },
      {
        id: 'pin',
        label: 'Flags',
        width: '4.4em',
        cell: d => {
          const flag = rowFlag(d);
          return flag ? h('span', { class: flag.cls, title: flag.title }, flag.text) : h('span', {});
        },
        sortValue: d => (d.pinned ? 0 : d.recalled ? 1 : 2)
      },
      { id: 'role', label: 'Role', width: '5.5em', cell: d => d.role, sortValue: d => d.role },
      {
        id: 'source',
        label: 'Source',
        width: 'minmax(11em, 1.3fr)',
        cell: d => sourceLabel(d),
        title: d => `layer ${d.layer ?? 'working'}, source ${d.source ?? 'history'}${d.section ? ', ' + d.section : ''}${typeof d.turn === 'number' ? ', turn ' + d.turn : ''}`,
        sortValue: d => `${d.layer ?? ''}/${d.source ?? ''}/${d.section ?? ''}`
      },
      {
        id: 'outcome',
        label: 'Outcome',
        width: '9.5em',
        cell: d => h('span', { class: `arcana-badge arcana-badge-${d.outcome}`, title: outcomeTitle(d) }, outcomeLabel(d)),
        sortValue: d => OUTCOME_RANK[d.outcome] ?? 9
      },
      { id: 'fidelity', label: 'Fid.', width: '3.4em', cell: d => d.fidelity ?? '—', sortValue: d => d.fidelity ?? 'L9' },
      {
        id: 'before',
        label: 'Before',
        width: '5em',
        cell: d => fmtInt(d.token_count_before),
        sortValue: d => d.token_count_before,
        className: 'arcana-num'
      },
      {
        id: 'after',
        label: '→ After',
        width: '5.5em',
        cell: d => '→ ' + fmtInt(d.token_count_after),
        sortValue: d => d.token_count_after,
        className: 'arcana-num'
      },
      { id: 'reason', label: 'Reason', width: 'minmax(11em, 1.6fr)', cell: d => d.reason, title: d => d.reason, sortValue: d => d.reason },
      {
        id: 'score',
        label: 'Score',
        width: '4.6em',
        cell: d => fmtScore(d.relevance_score),
        sortValue: d => (typeof d.relevance_score === 'number' ? d.relevance_score : -1),
        className: 'arcana-num'
      }
    ],
    detail: d => {
      const t = texts(d);
      const meta = `#${d.index} ${d.role} · ${d.outcome}${d.fidelity ? ' at ' + d.fidelity : ''} · ${fmtInt(d.token_count_before)} → ${fmtInt(d.token_count_after)} tokens · ${d.reason}` +
        (typeof d.position === 'number' ? ` · prompt position ${d.position}` : ' · not in the prompt as such') +
        (typeof d.turn === 'number' ? ` · turn ${d.turn}` : '') +
        (rowFlag(d) ? ` · ${rowFlag(d)!.title}` : '') +
        (d.section && d.source !== 'section' && d.source !== 'pin' ? ` · carried by the ${d.section.replace(/_/g, ' ')} section` : '');
      return h(
        'div',
        { class: 'arcana-detail' },
        h('div', { class: 'arcana-muted' }, meta),
        t.note ? h('div', { class: 'arcana-muted' }, t.note) : null,
        h('div', { class: 'arcana-detail-cols' },
          messageBlock('Original', t.original, t.originalMissing ?? 'not recorded'),
          messageBlock(d.recalled ? 'Sent (recalled, late in the prompt)' : 'Sent', t.sent,
            d.outcome === 'dropped' ? 'not sent (dropped)' : d.outcome === 'summarized' ? 'not sent as such: folded into the summary' : 'not recorded'),
          typeof d.anchor_position === 'number' ? messageBlock(`Sent in its slot (position ${d.anchor_position})`, t.anchor ?? null) : null)
      );
    }
  });
}

function segment(cls: string, tokens: number, total: number, label: string): HTMLElement | null {
  if (!(tokens > 0) || !(total > 0)) {
    return null;
  }
  const el = h('div', { class: `arcana-seg ${cls}`, title: `${label}: ${fmtInt(tokens)} tokens (${fmtPct(tokens / total)})` });
  el.style.width = `${Math.min(100, (tokens / total) * 100)}%`;
  return el;
}

function legend(items: Array<[string, string, number]>): HTMLElement {
  return h(
    'div',
    { class: 'arcana-legend' },
    ...items.map(([cls, label, n]) => h('span', { class: 'arcana-legend-item' }, h('span', { class: `arcana-swatch ${cls}`, 'aria-hidden': 'true' }), `${label} ${fmtInt(n)}`))
  );
}

/** Two bars: prompt tokens by layer against the available budget, and tokens by outcome. */
export function budgetBars(report: ContextReport | null | undefined, budget: BudgetSnapshot | null | undefined, decisions: MessageDecision[]): HTMLElement {
  const out = h('div', { class: 'arcana-budget' });
  if (budget) {
    const avail = budget.available || budget.total_window;
    const layerItems: Array<[string, string, number]> = [];
    const bar = h('div', { class: 'arcana-bar', role: 'img' });
    const layers = report?.layers ?? [];
    for (const name of LAYERS) {
      const l = layers.find(x => x.layer === name);
      const n = l ? l.tokens_after : 0;
      const seg = segment(`arcana-layer-${name}`, n, avail, name);
      if (seg) {
        bar.appendChild(seg);
      }
      layerItems.push([`arcana-layer-${name}`, name, n]);
    }
    const tools = report?.tools_tokens ?? 0;
    const seg = segment('arcana-layer-tools', tools, avail, 'tool specs');
    if (seg) {
      bar.appendChild(seg);
    }
    layerItems.push(['arcana-layer-tools', 'tools', tools]);
    layerItems.push(['arcana-layer-free', 'free', Math.max(0, budget.remaining)]);
    bar.setAttribute(
      'aria-label',
      `Prompt uses ${fmtInt(budget.used)} of ${fmtInt(avail)} available tokens (${fmtPct(budget.utilization)})`
    );
    out.appendChild(
      h(
        'div',
        { class: 'arcana-bar-title' },
        `Budget: ${fmtInt(budget.used)} / ${fmtInt(avail)} tokens (${fmtPct(budget.utilization)}) · window ${fmtInt(budget.total_window)}, reserve ${fmtInt(budget.response_reserve)}`,
        budget.overflow ? h('span', { class: 'arcana-warn' }, ' · OVERFLOW: the messages that must be kept did not fit') : null
      )
    );
    out.appendChild(bar);
    out.appendChild(legend(layerItems));
    if (report && typeof report.prefix_tokens_reused === 'number') {
      out.appendChild(
        h('div', { class: 'arcana-muted' }, `Prefix reused from the previous prompt: ${fmtInt(report.prefix_tokens_reused)} tokens` + (typeof report.prefix_share === 'number' ? `, ${Math.round(report.prefix_share * 100)}% of it` : '') + (typeof report.prefix_messages_reused === 'number' ? ` (${report.prefix_messages_reused} messages)` : ''))
      );
    }
  }
  if (decisions.length > 0) {
    const byOutcome: Record<string, number> = {};
    let saved = 0;
    let totalBefore = 0;
    for (const d of decisions) {
      totalBefore += d.token_count_before;
      if (d.outcome === 'kept' || d.outcome === 'compressed') {
        byOutcome[d.outcome] = (byOutcome[d.outcome] ?? 0) + d.token_count_after;
        saved += Math.max(0, d.token_count_before - d.token_count_after);
      } else {
        byOutcome[d.outcome] = (byOutcome[d.outcome] ?? 0) + d.token_count_before;
      }
    }
    const bar = h('div', { class: 'arcana-bar', role: 'img' });
    const items: Array<[string, string, number]> = [];
    for (const o of OUTCOMES) {
      const n = byOutcome[o] ?? 0;
      const seg = segment(`arcana-outcome-seg-${o}`, n, totalBefore, o);
      if (seg) {
        bar.appendChild(seg);
      }
      items.push([`arcana-outcome-seg-${o}`, o, n]);
      if (o === 'compressed') {
        const s2 = segment('arcana-outcome-seg-saved', saved, totalBefore, 'saved by compression');
        if (s2) {
          bar.appendChild(s2);
        }
        items.push(['arcana-outcome-seg-saved', 'saved by compression', saved]);
      }
    }
    bar.setAttribute('aria-label', `Input tokens by outcome, ${fmtInt(totalBefore)} before the build`);
    out.appendChild(h('div', { class: 'arcana-bar-title' }, `Input by outcome: ${fmtInt(totalBefore)} tokens before the build`));
    out.appendChild(bar);
    out.appendChild(legend(items));
  }
  return out;
}

/** "12 kept · 3 compressed · 1 dropped" */
export function outcomeSummary(decisions: MessageDecision[]): string {
  const c: Record<string, number> = {};
  for (const d of decisions) {
    c[d.outcome] = (c[d.outcome] ?? 0) + 1;
  }
  return OUTCOMES.filter(o => c[o]).map(o => `${c[o]} ${o}`).join(' · ') || 'no decisions';
}

/** A plain list of items, or a muted line when there are none. */
export function list<T>(items: T[] | null | undefined, render: (x: T) => Child, emptyText: string): HTMLElement {
  if (!items || items.length === 0) {
    return h('div', { class: 'arcana-muted' }, emptyText);
  }
  return h('ul', { class: 'arcana-list' }, ...items.map(x => h('li', {}, render(x))));
}
