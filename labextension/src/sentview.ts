/**
 * The "Prompt as sent" panel: one call's prompt, message by message (role, text, tokens), from the
 * trace's prompt_sent events (or a prompt snapshot), marked verified when its recomputed request
 * digest equals the recorded one. Used by the trace viewer / replay and by the turn inspector; it
 * reads only the parsed trace, so it works without a kernel.
 */

import { clear, collapsible, h, pre } from './dom';
import { fmtInt } from './format';
import type { KernelReply } from './schema.gen';
import { ParsedTrace, PROMPT_NOT_RECORDED, SentPrompt, sentPromptOf, sentStatus } from './trace';

/** Asks a live kernel to rebuild the call's prompt from the transcript (the `whatif` message, as recorded). */
export type Rebuild = () => Promise<KernelReply | null>;

/** An older trace's prompt, rebuilt by the kernel (digest-checked): what the Python's `prompt_as_sent` gives. */
function rebuiltBody(reply: KernelReply | null): HTMLElement {
  if (!reply || reply.type !== 'whatif' || !reply.ok) {
    const why = reply && 'message' in reply && reply.message ? String(reply.message) : 'no answer from the kernel';
    return h('div', { class: 'arcana-warn' }, `The kernel could not rebuild it: ${why}`);
  }
  const messages = reply.messages ?? [];
  return h('div', { class: 'arcana-sent-prompt arcana-sent-rebuilt' },
    h('div', { class: reply.verified ? 'arcana-ok arcana-sent-status' : 'arcana-warn arcana-sent-status' },
      reply.verified ? 'rebuilt from the transcript by the kernel; verified (its digest is the recorded one)'
        : 'rebuilt from the transcript by the kernel; NOT verified (its digest differs from the recorded one)'),
    h('ol', { class: 'arcana-prompt arcana-sent-list', start: 0 } as any,
      ...messages.map(m => h('li', { class: 'arcana-prompt-msg' }, h('div', { class: 'arcana-msg-head' }, m.role ?? ''),
        pre(m.content ?? '')))),
    reply.messages_left_out ? h('div', { class: 'arcana-muted' }, `${reply.messages_left_out} more message(s) not shown`) : null);
}

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
export function sentBody(p: SentPrompt | string | null, runHint = '', rebuild?: Rebuild): HTMLElement {
  if (p === null) {
    const missing = h('div', { class: 'arcana-muted arcana-sent-missing' },
      `The prompt as sent is ${PROMPT_NOT_RECORDED}.` +
      (rebuild ? '' : runHint ? ` With Python, arcana trace replay ${runHint} rebuilds it from the transcript (digest-checked).` : ''));
    if (!rebuild) {
      return missing;
    }
    const out = h('div', { class: 'arcana-sent-rebuild-out', role: 'status', 'aria-live': 'polite' });
    const btn = h('button', { type: 'button', class: 'arcana-btn arcana-sent-rebuild' }, 'Rebuild it in the kernel (digest-checked)');
    btn.addEventListener('click', () => {
      btn.setAttribute('disabled', '');
      clear(out);
      out.appendChild(h('div', { class: 'arcana-muted' }, 'Rebuilding in the kernel…'));
      void rebuild().then(r => {
        btn.removeAttribute('disabled');
        clear(out);
        out.appendChild(rebuiltBody(r));
      });
    });
    return h('div', {}, missing, btn, out);
  }
  if (typeof p === 'string') {
    return h('div', { class: 'arcana-warn arcana-sent-missing' }, p);
  }
  return h('div', { class: 'arcana-sent-prompt' },
    h('div', { class: p.verified ? 'arcana-ok arcana-sent-status' : 'arcana-warn arcana-sent-status' }, sentStatus(p)),
    messageList(p));
}

/**
 * A collapsed "Prompt as sent" section for (turn, step) of the parsed trace. `rebuild` (a live kernel):
 * an older trace without prompt_sent offers to rebuild the prompt in Python.
 */
export function sentPromptSection(trace: ParsedTrace, agent: string, turn: number, step = 0, open = false,
  rebuild?: Rebuild): HTMLElement {
  const p = sentPromptOf(trace, agent, turn, step);
  const hint = trace.runId ? `${trace.runId} --turn ${turn}${step ? ' --step ' + step : ''}` : '';
  return collapsible(sentTitle(p), () => sentBody(p, hint, rebuild), open, 'arcana-prompt-section arcana-sent-section');
}
