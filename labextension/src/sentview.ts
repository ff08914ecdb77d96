/**
 * The "Prompt as sent" panel: one call's prompt, message by message (role, text, tokens), as Python
 * resolved it from the trace's prompt_sent events (or a prompt snapshot) and checked against the
 * recorded request digest (`SentView`, arcana_jupyter/trace/views.py). Used by the trace viewer /
 * replay and by the turn inspector; it needs no kernel (the server extension sends it).
 */

import { clear, collapsible, h, pre } from './dom';
import { fmtInt } from './format';
import type { KernelReply, SentView, StepView } from './schema.gen';
import { PROMPT_NOT_RECORDED } from './source';
import type { MessageRecord } from './types';

/** What the panel shows of one call: its prompt, why it cannot be read, or nothing recorded (null). */
export type SentPrompt = SentView;

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
  const tokensOf = p.tokens ?? [];
  return h('ol', { class: 'arcana-prompt arcana-sent-list', start: 0 } as any,
    ...((p.messages ?? []) as unknown as MessageRecord[]).map((m, i) => {
      const tokens = tokensOf[i];
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
  const all = p.tokens ?? [];
  const known = all.filter((t): t is number => typeof t === 'number');
  const tokens = known.length === all.length && known.length ? `, ${fmtInt(known.reduce((a, b) => a + b, 0))} tokens` : '';
  return `Prompt as sent (${(p.messages ?? []).length} messages${tokens}) · ${p.verified ? 'verified' : 'not verified'}`;
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
    h('div', { class: p.verified ? 'arcana-ok arcana-sent-status' : 'arcana-warn arcana-sent-status' }, p.status),
    messageList(p));
}

/** The step's prompt as the panel takes it: the prompt, why it cannot be read (a string), or null. */
export function sentOf(step: StepView | null | undefined): SentPrompt | string | null {
  if (!step) {
    return null;
  }
  if (step.sent_problem) {
    return step.sent_problem;
  }
  return step.sent ?? null;
}

/**
 * A collapsed "Prompt as sent" section for one step of a turn as Python sent it. `rebuild` (a live
 * kernel): an older trace without prompt_sent offers to rebuild the prompt in Python.
 */
export function sentPromptSection(step: StepView | null | undefined, runId: string | null | undefined, turn: number,
  open = false, rebuild?: Rebuild): HTMLElement {
  const p = sentOf(step);
  const n = step?.step ?? 0;
  const hint = runId ? `${runId} --turn ${turn}${n ? ' --step ' + n : ''}` : '';
  return collapsible(sentTitle(p), () => sentBody(p, hint, rebuild), open, 'arcana-prompt-section arcana-sent-section');
}
