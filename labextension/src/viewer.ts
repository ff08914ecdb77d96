/**
 * The trace viewer: one run's JSONL file as a turn scrubber, the decision table of the chosen
 * turn, its prompt, the pins active at it, a diff between any two turns, the run's errors and the
 * lines that could not be read. The file is parsed once and indexed by turn; tables are virtual.
 *
 * `TraceView` is plain DOM (no JupyterLab, no Lumino): the JupyterLab document and the replay MIME
 * renderer host it in a Lumino widget (./viewerwidget), the replay widget (./widget) in its element.
 */

import { budgetBars, decisionTable, list, outcomeSummary } from './decisionview';
import { clear, collapsible, h, pre } from './dom';
import { sentPromptSection } from './sentview';
import { fmtCost, fmtInt, fmtLatency, fmtPct, preview, valueText } from './format';
import { VirtualTable } from './table';
import {
  contentText,
  decisionOf,
  decisionProblemOf,
  DiffRow,
  diffTurns,
  getTurn,
  messageFor,
  ParsedTrace,
  parseTrace,
  pinsOfBuild,
  promptOf,
  TurnInfo
} from './trace';
import { MessageDecision, MessageRecord } from './types';
import { Requester, whatIfFor } from './whatif';

export interface TraceViewerOptions {
  /** Reads the file's current text (called on open and on Refresh). */
  load: () => Promise<string>;
  path: string;
  /** Take the keyboard focus when shown (default true; false inside a notebook output). */
  focusOnAttach?: boolean;
  /** The turn to show first (default: the last). */
  selectTurn?: number | null;
  /**
   * The what-if form under the turn (the replay of `%arcana_replay`): who asks the kernel to rebuild
   * it, or null when no kernel can (the form says so). Absent: no form (the trace document).
   */
  whatIf?: () => Requester | null;
}

/** The model's share of a turn's latency: its LLM calls' latency_ms summed (null: no call answered). */
function modelMs(info: TurnInfo): number | null {
  const times = info.steps.map(s => s.llmCall?.metadata?.latency_ms).filter((x): x is number => typeof x === 'number');
  return times.length ? times.reduce((a, b) => a + b, 0) : null;
}

function fmtDecision(d: MessageDecision | null): string {
  if (!d) {
    return '—';
  }
  return `${d.outcome}${d.fidelity ? ' ' + d.fidelity : ''} · ${fmtInt(d.token_count_after)} tok`;
}

export class TraceView {
  /** The viewer's element (the host puts it where it belongs). */
  readonly node: HTMLElement = document.createElement('div');
  private readonly opts: TraceViewerOptions;
  private trace: ParsedTrace | null = null;
  private agent = 'main';
  private turnPos = 0;
  private step: number | undefined = undefined;
  private frame = 0;
  // Persistent parts of the layout.
  private readonly statusEl = h('div', { class: 'arcana-viewer-status', role: 'status', 'aria-live': 'polite' });
  private readonly titleEl = h('div', { class: 'arcana-viewer-title' });
  private readonly agentHost = h('span', { class: 'arcana-agent-host' });
  private readonly slider = h('input', { type: 'range', class: 'arcana-slider', min: 0, max: 0, step: 1, value: 0, 'aria-label': 'Turn' }) as HTMLInputElement;
  private readonly turnLabel = h('span', { class: 'arcana-turn-label', 'aria-live': 'polite' });
  private readonly turnHost = h('div', { class: 'arcana-turn-host' });
  private readonly diffA = h('input', { type: 'number', class: 'arcana-diff-input', min: 1, 'aria-label': 'Diff: first turn' }) as HTMLInputElement;
  private readonly diffB = h('input', { type: 'number', class: 'arcana-diff-input', min: 1, 'aria-label': 'Diff: second turn' }) as HTMLInputElement;
  private readonly diffSummary = h('div', { class: 'arcana-diff-summary', role: 'status' });
  private readonly diffTable: VirtualTable<DiffRow>;
  private readonly problemsHost = h('div', { class: 'arcana-problems-host' });
  private readonly errorsHost = h('div', { class: 'arcana-errors-host' });
  private readonly decisions: VirtualTable<MessageDecision>;
  private diffPinned = false;
  /** Milliseconds the last parse and first render took (read by the browser benchmark). */
  lastParseMs = 0;
  lastRenderMs = 0;

  constructor(options: TraceViewerOptions) {
    this.opts = options;
    this.node.classList.add('arcana-viewer');
    this.node.tabIndex = 0;
    this.node.setAttribute('aria-label', `Arcana trace viewer: ${options.path}`);

    this.decisions = decisionTable('Context decisions of the selected turn', d => this.textsFor(d), 420);
    this.diffTable = new VirtualTable<DiffRow>({
      label: 'Messages that changed between the two turns',
      maxHeight: 300,
      emptyText: 'No message changed between these turns.',
      rowClass: r => `arcana-diff-${r.changes[0]}`,
      columns: [
        { id: 'msg', label: 'Message', width: 'minmax(6em, 0.8fr)', cell: r => r.label, sortValue: r => (r.b ?? r.a)?.index ?? 0 },
        { id: 'role', label: 'Role', width: '5.5em', cell: r => r.role, sortValue: r => r.role },
        { id: 'change', label: 'Change', width: 'minmax(7em, 0.8fr)', cell: r => r.changes.join(', '), sortValue: r => r.changes.join(',') },
        { id: 'a', label: 'Turn A', width: 'minmax(9em, 1fr)', cell: r => fmtDecision(r.a), sortValue: r => r.a?.token_count_after ?? -1 },
        { id: 'b', label: 'Turn B', width: 'minmax(9em, 1fr)', cell: r => fmtDecision(r.b), sortValue: r => r.b?.token_count_after ?? -1 },
        {
          id: 'delta',
          label: 'Δ tokens',
          width: '6em',
          cell: r => {
            const n = (r.b?.token_count_after ?? 0) - (r.a?.token_count_after ?? 0);
            return (n > 0 ? '+' : '') + fmtInt(n);
          },
          sortValue: r => (r.b?.token_count_after ?? 0) - (r.a?.token_count_after ?? 0),
          className: 'arcana-num'
        }
      ]
    });

    const refresh = h('button', { type: 'button', class: 'arcana-btn arcana-refresh', title: 'Read the file again (for a trace still being written)' }, 'Refresh');
    refresh.addEventListener('click', () => void this.refresh());
    const prev = h('button', { type: 'button', class: 'arcana-btn arcana-prev', 'aria-label': 'Previous turn' }, '◀ Prev');
    const next = h('button', { type: 'button', class: 'arcana-btn arcana-next', 'aria-label': 'Next turn' }, 'Next ▶');
    prev.addEventListener('click', () => this.goTo(this.turnPos - 1));
    next.addEventListener('click', () => this.goTo(this.turnPos + 1));
    this.slider.addEventListener('input', () => this.goTo(Number(this.slider.value)));
    const compare = h('button', { type: 'button', class: 'arcana-btn arcana-compare' }, 'Compare');
    compare.addEventListener('click', () => {
      this.diffPinned = true;
      this.renderDiff();
    });
    const follow = h('button', { type: 'button', class: 'arcana-btn arcana-diff-follow', title: 'Compare the selected turn with the one before it' }, 'Follow scrubber');
    follow.addEventListener('click', () => {
      this.diffPinned = false;
      this.syncDiffInputs();
      this.renderDiff();
    });
    for (const inp of [this.diffA, this.diffB]) {
      inp.addEventListener('keydown', e => {
        if (e.key === 'Enter') {
          this.diffPinned = true;
          this.renderDiff();
        }
      });
    }

    this.node.appendChild(
      h('div', { class: 'arcana-viewer-inner' },
        h('div', { class: 'arcana-viewer-header' }, this.titleEl, refresh),
        this.statusEl,
        h('div', { class: 'arcana-scrubber', role: 'group', 'aria-label': 'Turn scrubber', 'data-lm-suppress-shortcuts': 'true' }, this.agentHost, prev, this.slider, next, this.turnLabel,
          h('span', { class: 'arcana-muted arcana-hint' }, '← → or [ ] to move between turns')),
        this.turnHost,
        h('section', { class: 'arcana-section arcana-diff' },
          h('h4', { class: 'arcana-section-title' }, 'Diff between two turns'),
          h('div', { class: 'arcana-diff-controls' }, h('label', {}, 'Turn A ', this.diffA), h('label', {}, 'Turn B ', this.diffB), compare, follow),
          this.diffSummary,
          this.diffTable.node),
        this.errorsHost,
        this.problemsHost)
    );
    this.node.addEventListener('keydown', e => this.onKey(e));
  }

  /** Load (or reload) the file and render; keeps the selected turn when it still exists. */
  async refresh(): Promise<void> {
    this.statusEl.textContent = 'Reading…';
    let text: string;
    const t0 = performance.now();
    try {
      text = await this.opts.load();
      this.node.dataset.fetchMs = (performance.now() - t0).toFixed(1);
    } catch (err) {
      this.statusEl.textContent = `Could not read ${this.opts.path}: ${String((err as Error)?.message ?? err)}`;
      this.statusEl.classList.add('arcana-warn');
      return;
    }
    this.setText(text);
  }

  /** Parse `text` and render it (public for the tests and the benchmark). */
  setText(text: string): void {
    const t0 = performance.now();
    const keepTurn = this.trace ? this.currentTurn() : null;
    const trace = parseTrace(text);
    const t1 = performance.now();
    this.trace = trace;
    if (!trace.turnsByAgent.has(this.agent)) {
      this.agent = trace.agents.find(a => trace.turnsByAgent.has(a)) ?? 'main';
    }
    const turns = trace.turnsByAgent.get(this.agent) ?? [];
    const first = this.opts.selectTurn;
    const keepIdx = keepTurn === null ? (typeof first === 'number' ? turns.indexOf(first) : -1) : turns.indexOf(keepTurn);
    this.turnPos = keepIdx >= 0 ? keepIdx : Math.max(0, turns.length - 1);
    try {
      this.renderHeader();
      this.renderAgents();
      this.renderProblems();
      this.renderRunErrors();
      this.syncSlider();
      this.renderTurn();
      this.syncDiffInputs();
      this.renderDiff();
    } catch (err) {
      clear(this.turnHost);
      this.turnHost.appendChild(h('div', { class: 'arcana-warn', role: 'alert' }, `Could not show this trace: ${String((err as Error)?.message ?? err)}`));
    }
    const t2 = performance.now();
    this.lastParseMs = t1 - t0;
    this.lastRenderMs = t2 - t1;
    this.node.dataset.parseMs = this.lastParseMs.toFixed(1);
    this.node.dataset.renderMs = this.lastRenderMs.toFixed(1);
    this.node.dataset.turns = String(turns.length);
    this.statusEl.classList.remove('arcana-warn');
    const torn = trace.problems.some(p => p.torn);
    const bad = trace.problems.filter(p => !p.torn && p.kind !== 'event').length;
    const badEvents = trace.problems.filter(p => p.kind === 'event').length;
    this.statusEl.textContent =
      `${fmtInt(trace.events.length)} events · ${fmtInt(turns.length)} turns · ${(trace.bytes / 1024).toFixed(0)} KiB · parsed in ${this.lastParseMs.toFixed(0)} ms` +
      (bad ? ` · ${bad} corrupt line${bad > 1 ? 's' : ''} (listed below)` : '') +
      (badEvents ? ` · ${badEvents} decision${badEvents > 1 ? 's' : ''} that could not be resolved (listed below)` : '') +
      (torn ? ' · last line incomplete (still being written? press Refresh)' : '') +
      (trace.runEnd ? ' · run ended' : ' · run not ended');
  }

  private currentTurn(): number | null {
    const turns = this.trace?.turnsByAgent.get(this.agent) ?? [];
    return turns.length ? turns[Math.min(this.turnPos, turns.length - 1)] : null;
  }

  private renderHeader(): void {
    const t = this.trace!;
    const md = t.runStart?.metadata ?? {};
    clear(this.titleEl);
    this.titleEl.appendChild(h('strong', {}, `Run ${t.runId ?? '(unknown run)'}`));
    this.titleEl.appendChild(h('span', { class: 'arcana-muted' }, ` · ${md.model ?? 'model unknown'} · ${this.opts.path}` + (md.arcana_version ? ` · arcana ${md.arcana_version}` : '')));
  }

  private renderAgents(): void {
    const t = this.trace!;
    clear(this.agentHost);
    const agents = t.agents.filter(a => t.turnsByAgent.has(a));
    if (agents.length <= 1) {
      return;
    }
    const sel = h('select', { class: 'arcana-agent', 'aria-label': 'Agent' }, ...agents.map(a => h('option', { value: a }, a))) as HTMLSelectElement;
    sel.value = this.agent;
    sel.addEventListener('change', () => {
      this.agent = sel.value;
      this.turnPos = Math.max(0, (t.turnsByAgent.get(this.agent)?.length ?? 1) - 1);
      this.syncSlider();
      this.renderTurn();
      this.diffPinned = false;
      this.syncDiffInputs();
      this.renderDiff();
    });
    this.agentHost.appendChild(sel);
  }

  private syncSlider(): void {
    const turns = this.trace?.turnsByAgent.get(this.agent) ?? [];
    this.slider.max = String(Math.max(0, turns.length - 1));
    this.slider.value = String(this.turnPos);
    this.slider.disabled = turns.length <= 1;
    const cur = this.currentTurn();
    const text = cur === null ? 'no turns' : `Turn ${cur} (${this.turnPos + 1} of ${turns.length})`;
    this.turnLabel.textContent = text;
    this.slider.setAttribute('aria-valuetext', text);
  }

  /** Move to the turn at position `pos` (clamped). Rendering is batched to one per frame. */
  goTo(pos: number): void {
    const turns = this.trace?.turnsByAgent.get(this.agent) ?? [];
    const p = Math.max(0, Math.min(turns.length - 1, pos));
    if (p === this.turnPos || turns.length === 0) {
      return;
    }
    this.turnPos = p;
    this.step = undefined;
    this.syncSlider();
    if (!this.frame) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.renderTurn();
        if (!this.diffPinned) {
          this.syncDiffInputs();
          this.renderDiff();
        }
      });
    }
  }

  private onKey(e: KeyboardEvent): void {
    const target = e.target as HTMLElement;
    // The slider moves by itself with the arrows in a standalone viewer, but a notebook's keyboard
    // handling can swallow them: the scrubber moves the turn itself, from the slider too.
    const onSlider = target === this.slider;
    if (!onSlider && target && (target.tagName === 'INPUT' || target.tagName === 'SELECT' || target.tagName === 'TEXTAREA' || target.classList.contains('arcana-vt-body-row'))) {
      return;
    }
    if (e.key === 'ArrowLeft' || e.key === '[') {
      this.goTo(this.turnPos - 1);
    } else if (e.key === 'ArrowRight' || e.key === ']') {
      this.goTo(this.turnPos + 1);
    } else if (e.key === 'Home' && target === this.node) {
      this.goTo(0);
    } else if (e.key === 'End' && target === this.node) {
      this.goTo(Number.MAX_SAFE_INTEGER);
    } else {
      return;
    }
    e.preventDefault();
    e.stopPropagation();
  }

  /** The kernel came or went: draw the turn again (its what-if form is enabled or says it needs one). */
  liveChanged(): void {
    if (this.trace && this.opts.whatIf) {
      this.renderTurn();
    }
  }

  /** Turns of the selected agent in the file as last read (0 before it is read). */
  get turnCount(): number {
    return this.trace?.turnsByAgent.get(this.agent)?.length ?? 0;
  }

  private textsFor(d: MessageDecision): { original: MessageRecord | null; sent: MessageRecord | null; anchor?: MessageRecord | null; note?: string } {
    const t = this.trace;
    const turn = this.currentTurn();
    if (!t || turn === null) {
      return { original: null, sent: null };
    }
    const original = messageFor(t, this.agent, turn, d, this.step);
    const prompt = promptOf(t, this.agent, turn, this.step ?? this.firstStep(turn));
    const sent = prompt && typeof d.position === 'number' ? prompt[d.position] ?? null : null;
    const anchor = prompt && typeof d.anchor_position === 'number' ? prompt[d.anchor_position] ?? null : null;
    return {
      original,
      sent,
      anchor,
      note: prompt ? undefined : 'The prompt as sent was not recorded (prompt snapshots off); the original is from the transcript.'
    };
  }

  private firstStep(turn: number): number {
    const info = this.trace ? getTurn(this.trace, this.agent, turn) : null;
    return info?.steps.find(s => s.decision)?.step ?? 0;
  }

  private renderTurn(): void {
    try {
      this.renderTurnInner();
    } catch (err) {
      clear(this.turnHost);
      this.turnHost.appendChild(h('div', { class: 'arcana-warn', role: 'alert' }, `Could not show turn ${this.currentTurn()}: ${String((err as Error)?.message ?? err)}`));
    }
  }

  private renderTurnInner(): void {
    clear(this.turnHost);
    const t = this.trace;
    const turn = this.currentTurn();
    if (!t || turn === null) {
      this.decisions.setRows([]);
      this.turnHost.appendChild(h('div', { class: 'arcana-muted' }, t && t.events.length ? 'This trace has no turns yet.' : 'This trace is empty.'));
      return;
    }
    const info = getTurn(t, this.agent, turn)!;
    const stepNo = this.step ?? this.firstStep(turn);
    const stepInfo = info.steps.find(s => s.step === stepNo) ?? null;
    const decision = decisionOf(t, this.agent, turn, stepNo);
    const problem = decision ? null : decisionProblemOf(t, this.agent, turn, stepNo);
    const md = stepInfo?.decision?.metadata ?? {};
    const end = info.turnEnd?.metadata ?? {};
    const decisions = decision?.decisions ?? [];

    // Step chooser (tool-loop follow-up calls).
    let stepSel: HTMLElement | null = null;
    if (info.steps.length > 1) {
      const sel = h('select', { class: 'arcana-step-select', 'aria-label': 'LLM call (step) of this turn' },
        ...info.steps.map(s => h('option', { value: s.step }, s.step < 0 ? `summariser call (step ${s.step})` : `step ${s.step}`))) as HTMLSelectElement;
      sel.value = String(stepNo);
      sel.addEventListener('change', () => {
        this.step = Number(sel.value);
        this.renderTurn();
      });
      stepSel = h('label', {}, 'Step ', sel);
    }
    const usage = end.usage ?? {};
    const summary = h('div', { class: 'arcana-turn-summary' },
      h('strong', {}, `Turn ${turn}`),
      ` · ${end.status ?? (info.turnEnd ? '?' : 'in progress')}`,
      decision ? ` · ${decision.strategy} · ${outcomeSummary(decisions)}` : problem ? ' · context decision unreadable' : ' · no context decision',
      md.budget ? ` · ${fmtInt(md.budget.used)} / ${fmtInt(md.budget.available)} tokens (${fmtPct(md.budget.utilization)})` : '',
      info.turnEnd ? ` · ${fmtInt(usage.input_tokens ?? usage['gen_ai.usage.input_tokens'])} in / ${fmtInt(usage.output_tokens ?? usage['gen_ai.usage.output_tokens'])} out · ${fmtCost(end.cost_usd)} · ${fmtLatency(end.latency_ms, modelMs(info))}` : '',
      stepSel ? ' · ' : '', stepSel);
    this.turnHost.appendChild(summary);
    if (problem) {
      this.turnHost.appendChild(h('div', { class: 'arcana-warn arcana-decision-problem', role: 'alert' },
        `The decisions of this build could not be read: ${problem}`));
    }

    const input = contentText(info.userMessage?.metadata?.message);
    const reply = typeof end.reply === 'string' ? end.reply : null;
    this.turnHost.appendChild(
      h('div', { class: 'arcana-io' },
        h('div', { class: 'arcana-io-item' }, h('span', { class: 'arcana-io-label' }, 'User'), ' ', info.userMessage ? (input === null ? h('span', { class: 'arcana-muted' }, '(content not recorded)') : preview(input, 240)) : h('span', { class: 'arcana-muted' }, '(no user message)')),
        h('div', { class: 'arcana-io-item' }, h('span', { class: 'arcana-io-label' }, 'Reply'), ' ', reply === null ? h('span', { class: 'arcana-muted' }, info.turnEnd ? '(not recorded)' : '(turn not finished)') : preview(reply, 240)))
    );

    this.turnHost.appendChild(budgetBars(md.report, md.budget, decisions));
    this.decisions.setRows(decisions);
    this.turnHost.appendChild(h('h4', { class: 'arcana-section-title arcana-plain' }, `Decisions (${fmtInt(decisions.length)})`));
    this.turnHost.appendChild(this.decisions.node);
    if (decision?.notes?.length) {
      this.turnHost.appendChild(h('div', { class: 'arcana-notes' }, h('strong', {}, 'Notes: '), decision.notes.join(' · ')));
    }

    if (this.opts.whatIf && decision) {
      // What if: the kernel rebuilds this turn (this step) with other settings, beside what was sent.
      const budget = md.budget ?? {};
      this.turnHost.appendChild(whatIfFor({
        run_id: String(t.runId ?? ''), agent: this.agent, turn, step: stepNo,
        total_window: typeof budget.total_window === 'number' ? budget.total_window : null,
        response_reserve: typeof budget.response_reserve === 'number' ? budget.response_reserve : null
      }, this.opts.whatIf(), 'arcana-replay-whatif'));
    }

    const grid = h('div', { class: 'arcana-turn-grid' });
    // The prompt as sent (prompt_sent events; a snapshot in older traces).
    grid.appendChild(sentPromptSection(t, this.agent, turn, stepNo));
    // Pins active at this turn: the ones its build had (the decision's inputs), else the primitives'.
    const pins = pinsOfBuild(t, this.agent, turn, stepNo);
    grid.appendChild(
      collapsible(`Pins active at turn ${turn} (${pins.length})`, () =>
        list(pins, p => h('div', { class: 'arcana-pin' },
          h('span', { class: 'arcana-pin-flag' }, '[PIN]'), ' ', h('span', { class: 'arcana-mono' }, p.pin_id), p.label ? ` “${p.label}”` : '',
          h('span', { class: 'arcana-muted' }, (p.created_turn === null ? '' : p.created_turn < 1 ? ' · pinned before the first turn' : ` · pinned at turn ${p.created_turn}`) + (p.until_turn !== null ? ` · until turn ${p.until_turn}` : '')),
          p.content !== null ? pre(p.content) : null), 'No pins active at this turn.'), pins.length > 0, 'arcana-pins-section')
    );
    // Primitive and tool calls of the turn.
    if (info.primitives.length || info.toolCalls.length) {
      grid.appendChild(
        collapsible(`Tool and primitive calls (${info.toolCalls.length + info.primitives.length})`, () =>
          h('div', {},
            list(info.primitives, ev => h('div', {}, h('strong', {}, String(ev.metadata.primitive)), ' ', preview(valueText(ev.metadata.args), 200), pre(valueText(ev.metadata.result, 2000))), 'No primitive calls.'),
            list(info.toolCalls, ev => h('div', {}, h('strong', {}, String(ev.metadata.name)), h('span', { class: ev.metadata.ok ? 'arcana-ok' : 'arcana-warn' }, ev.metadata.ok ? ' ok' : ' failed'),
              pre('arguments: ' + valueText(ev.metadata.arguments, 2000)), pre('result: ' + valueText(ev.metadata.result, 2000))), 'No tool calls.')))
      );
    }
    this.turnHost.appendChild(grid);
    if (info.errors.length) {
      this.turnHost.appendChild(
        h('div', { class: 'arcana-errors', role: 'alert' }, h('strong', {}, `Errors in turn ${turn} (${info.errors.length})`),
          list(info.errors, ev => `${ev.metadata.type ?? 'error'}${ev.metadata.where ? ' in ' + ev.metadata.where : ''}: ${ev.metadata.message ?? ''}`, ''))
      );
    }
  }

  private syncDiffInputs(): void {
    const turns = this.trace?.turnsByAgent.get(this.agent) ?? [];
    const cur = this.currentTurn();
    if (cur === null) {
      this.diffA.value = '';
      this.diffB.value = '';
      return;
    }
    const prevTurn = this.turnPos > 0 ? turns[this.turnPos - 1] : cur;
    this.diffA.value = String(prevTurn);
    this.diffB.value = String(cur);
    this.diffA.max = this.diffB.max = String(turns[turns.length - 1]);
  }

  private renderDiff(): void {
    const t = this.trace;
    clear(this.diffSummary);
    this.diffSummary.classList.remove('arcana-warn');
    if (!t) {
      return;
    }
    const a = Number(this.diffA.value);
    const b = Number(this.diffB.value);
    const missing = [a, b].filter(x => !getTurn(t, this.agent, x));
    if (!this.diffA.value || !this.diffB.value || missing.length) {
      this.diffTable.setRows([]);
      this.diffSummary.classList.add('arcana-warn');
      this.diffSummary.textContent = this.diffA.value && this.diffB.value ? `No turn ${missing.join(' or ')} in this run.` : 'Choose two turns.';
      return;
    }
    const unreadable = [...new Set([a, b])].filter(x => decisionProblemOf(t, this.agent, x) !== null);
    if (unreadable.length) {
      // Comparing with an empty list would list every message as added or removed.
      this.diffTable.setRows([]);
      this.diffSummary.classList.add('arcana-warn');
      this.diffSummary.textContent = `Cannot compare turn ${a} with turn ${b}: the decisions of turn ${unreadable.join(' and ')} could not be read (see the problems below).`;
      return;
    }
    const d = diffTurns(t, this.agent, a, b);
    const counts = (c: Record<string, number>) => Object.entries(c).map(([k, v]) => `${v} ${k}`).join(', ') || 'none';
    this.diffSummary.textContent =
      `Turn ${a} → turn ${b}: ${d.rows.length} message${d.rows.length === 1 ? '' : 's'} changed, ${d.unchanged} unchanged · ` +
      `tokens sent ${fmtInt(d.tokensA)} → ${fmtInt(d.tokensB)} (${d.tokensB - d.tokensA >= 0 ? '+' : ''}${fmtInt(d.tokensB - d.tokensA)}) · ` +
      `A: ${counts(d.countsA)} · B: ${counts(d.countsB)}`;
    this.diffTable.setRows(d.rows);
  }

  private renderProblems(): void {
    clear(this.problemsHost);
    const probs = this.trace?.problems ?? [];
    if (!probs.length) {
      return;
    }
    this.problemsHost.appendChild(
      h('section', { class: 'arcana-section arcana-problems', role: 'alert' },
        h('h4', { class: 'arcana-section-title arcana-plain' },
          probs.some(p => p.kind === 'event') ? `Lines and events that could not be read (${probs.length})` : `Lines that could not be read (${probs.length})`),
        list(probs, p => h('div', { class: p.torn ? 'arcana-muted' : 'arcana-warn' },
          h('strong', {}, `line ${p.line}`), `: ${p.problem}`, pre(p.excerpt, 'arcana-pre arcana-excerpt')), ''))
    );
  }

  private renderRunErrors(): void {
    clear(this.errorsHost);
    const errs = this.trace?.errors ?? [];
    this.errorsHost.appendChild(
      h('section', { class: 'arcana-section arcana-run-errors' },
        h('h4', { class: 'arcana-section-title arcana-plain' }, `Errors of the run (${errs.length})`),
        list(errs.slice(0, 500), ev => {
          const btn = h('button', { type: 'button', class: 'arcana-link' }, ev.turn === null ? 'run' : `turn ${ev.turn}`);
          btn.addEventListener('click', () => {
            const turns = this.trace?.turnsByAgent.get(ev.agent) ?? [];
            if (ev.turn !== null && turns.includes(ev.turn)) {
              this.agent = ev.agent;
              this.goTo(turns.indexOf(ev.turn));
            }
          });
          return h('div', {}, btn, ` · ${ev.agent} · ${ev.metadata.type ?? 'error'}${ev.metadata.where ? ' in ' + ev.metadata.where : ''}${ev.metadata.recoverable ? ' (recovered)' : ''}: ${ev.metadata.message ?? ''}`);
        }, 'No errors recorded.'),
        errs.length > 500 ? h('div', { class: 'arcana-muted' }, `… and ${errs.length - 500} more`) : null)
    );
  }

  /** Called by the host once the node is in the page. */
  attached(): void {
    // Let the keyboard work right away when the viewer opens.
    if (this.opts.focusOnAttach !== false) {
      this.node.focus({ preventScroll: true });
    }
  }
}
