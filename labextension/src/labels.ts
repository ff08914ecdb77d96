/**
 * What a decision row says of itself — its flag, its source and its outcome — and how an
 * adaptive-context change is listed. Pure functions, shared by the inspector, the trace viewer and
 * the widget; the Python side (arcana_jupyter/schema/labels.py: the static HTML, the CLI, the turn
 * bundle) applies the same rules, and labextension/test/row_labels.json is the one set of cases both
 * are tested on.
 */

import { MessageDecision } from './types';

/**
 * The one flag a decision row shows: `[PIN]` only for a pin, `[KEEP]` for a protected section (the
 * checkpoint: never compressed, but not a pin), `[REC]` for a turn recalled as relevant to the input,
 * `[RECENT]` for one placed late because it is recent. Same rule as the static HTML (render/turn.py).
 */
export function rowFlag(d: MessageDecision): { text: string; title: string; cls: string } | null {
  if (d.pinned) {
    return d.source === 'pin'
      ? { text: '[PIN]', title: 'Pinned: never compressed', cls: 'arcana-pin-flag' }
      : { text: '[KEEP]', title: 'Protected section: never compressed (not a pin)', cls: 'arcana-keep-flag' };
  }
  if (d.recalled) {
    return d.reason === 'recency'
      ? { text: '[RECENT]', title: 'Recent: placed late in the prompt, next to the input', cls: 'arcana-rec-flag' }
      : { text: '[REC]', title: 'Recalled: placed late in the prompt as relevant to this input', cls: 'arcana-rec-flag' };
  }
  return null;
}

/** `layer/source:section`, without saying a section's name twice (`section:checkpoint`, not `checkpoint checkpoint`). */
export function sourceLabel(d: MessageDecision): string {
  const source = d.source ?? 'history';
  const section = d.section && d.section !== source ? ':' + d.section : '';
  return `${d.layer ?? 'working'}/${source}${section}`;
}

/** A dropped message whose content a section carries says where it went (`dropped → checkpoint`). */
export function outcomeLabel(d: MessageDecision): string {
  if (d.outcome === 'dropped' && d.section && d.source !== 'section' && d.source !== 'pin') {
    return `dropped → ${d.section.replace(/_/g, ' ')}`;
  }
  return d.outcome;
}

export function outcomeTitle(d: MessageDecision): string {
  return outcomeLabel(d) !== d.outcome
    ? `Not sent verbatim: the ${d.section!.replace(/_/g, ' ')} section carries its content`
    : d.outcome;
}

/** Engine actions that change no working-memory object: the per-turn checkpoint and the two reads. */
const NOT_CHANGES = new Set(['checkpoint', 'search_turn_events', 'retrieve_artifact']);

/** Whether a turn's `state_change` / `context_action` changed working memory (a saved bundle may hold the checkpoint's). */
export function isChange(c: Record<string, any>): boolean {
  if (c.event_type === 'state_change') {
    return true;
  }
  return c.event_type === 'context_action' && !NOT_CHANGES.has(String(c.action));
}

const BY: Record<string, string> = { llm: ' by the model', user: ' by you', widget: ' by you' };

/** One line for a change: the kind said once (never `checkpoint checkpoint`), who did it, a refusal. */
export function changeLabel(c: Record<string, any>): string {
  if (c.event_type === 'state_change') {
    return `${c.object_id || '?'} (${c.kind || '?'}): ${c.from_tier || 'new'} → ${c.to_tier || '—'}` +
      (c.cause ? ` · ${c.cause}` : '');
  }
  const action = String(c.action || 'action');
  let text = action + (c.object_id ? ` ${c.object_id}` : '') + (c.kind && c.kind !== action ? ` (${c.kind})` : '') +
    (BY[String(c.source)] ?? '');
  const result = c.result;
  if (result && typeof result === 'object' && result.ok === false) {
    text += ` — refused: ${result.error || 'failed'}`;
  }
  return text;
}
