/**
 * The "Prompt as sent" panel: one call's prompt, message by message (role, text, tokens), from the
 * trace's prompt_sent events (or a prompt snapshot), marked verified when its recomputed request
 * digest equals the recorded one. Used by the trace viewer / replay and by the turn inspector; it
 * reads only the parsed trace, so it works without a kernel.
 */

import { collapsible, h, pre } from './dom';
import { fmtInt } from './format';
import { ParsedTrace, PROMPT_NOT_RECORDED, SentPrompt, sentPromptOf, sentStatus } from './trace';

function messageList(p: SentPrompt): HTMLElement {
  return h('ol', { class: 'arcana-prompt arcana-sent-list', start: 0 } as any,
    ...p.messages.map((m, i) => {
      const tokens = p.tokens[i];
      return h('li', { class: `arcana-prompt-msg arcana-role-${String(m.role).replace(/[^a-z]/g, '')}` },
        h('div', { class: 'arcana-msg-head' }, `${m.role}${m.name ? ' (' + m.name + ')' : ''}`,
          typeof tokens === 'number' ? h('span', { class: 'arcana-muted' }, ` · ${fmtInt(tokens)} tokens`) : null),
        m.content ? pre(m.content) : null,
        ...(m.tool_calls ?? []).map(tc => pre(`→ tool call ${tc.function?.name ?? '?'}(${tc.function?.arguments ?? ''})`, 'arcana-pre arcana-toolcall')),
        m.tool_call_id ? h('div', { class: 'arcana-muted' }, `result of ${m.tool_call_id}`) : null);
    }));
}

/** The panel's title, e.g. "Prompt as sent (5 messages, 812 tokens) · verified". */
export function sentTitle(p: SentPrompt | string | null): string {
  if (p === null) {
    return 'Prompt as sent (not recorded)';
  }
  if (typeof p === 'string') {
    return 'Prompt as sent (cannot be read)';
  }
  const known = p.tokens.filter((t): t is number => typeof t === 'number');
  const tokens = known.length === p.tokens.length && known.length ? `, ${fmtInt(known.reduce((a, b) => a + b, 0))} tokens` : '';
  return `Prompt as sent (${p.messages.length} messages${tokens}) · ${p.verified ? 'verified' : 'not verified'}`;
}

/** The body: the status line (verified, digest) and the messages; or why there is nothing to show. */
export function sentBody(p: SentPrompt | string | null, runHint = ''): HTMLElement {
  if (p === null) {
    return h('div', { class: 'arcana-muted arcana-sent-missing' },
      `The prompt as sent is ${PROMPT_NOT_RECORDED}.` +
      (runHint ? ` With Python, arcana trace replay ${runHint} rebuilds it from the transcript (digest-checked).` : ''));
  }
  if (typeof p === 'string') {
    return h('div', { class: 'arcana-warn arcana-sent-missing' }, p);
  }
  return h('div', { class: 'arcana-sent-prompt' },
    h('div', { class: p.verified ? 'arcana-ok arcana-sent-status' : 'arcana-warn arcana-sent-status' }, sentStatus(p)),
    messageList(p));
}

/** A collapsed "Prompt as sent" section for (turn, step) of the parsed trace. */
export function sentPromptSection(trace: ParsedTrace, agent: string, turn: number, step = 0, open = false): HTMLElement {
  const p = sentPromptOf(trace, agent, turn, step);
  const hint = trace.runId ? `${trace.runId} --turn ${turn}${step ? ' --step ' + step : ''}` : '';
  return collapsible(sentTitle(p), () => sentBody(p, hint), open, 'arcana-prompt-section arcana-sent-section');
}
