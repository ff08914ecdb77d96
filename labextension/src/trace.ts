/**
 * Reading a trace file (docs/TRACE_FORMAT.md): parse once, index by (agent, turn), and answer
 * the viewer's questions — the decisions and prompt of a turn, the pins active at a turn, the
 * difference between two turns, the run's errors — without rescanning the events.
 *
 * Pure logic, no DOM and no JupyterLab imports: the unit tests run it under plain node.
 */

import type { ContextDecision, MessageDecision, MessageRecord, TraceEvent } from './types';

/** A line that could not be read. A torn last line (a trace still being written) is a warning. */
export interface TraceProblem {
  line: number;
  problem: string;
  torn: boolean;
  excerpt: string;
}

/** One LLM call's build inside a turn: its decision and, when recorded, the prompt snapshot. */
export interface StepInfo {
  step: number;
  decision: TraceEvent | null;
  snapshot: TraceEvent | null;
  llmCall: TraceEvent | null;
}

export interface TurnInfo {
  agent: string;
  turn: number;
  /** Indices into ParsedTrace.events, in file order. */
  events: number[];
  steps: StepInfo[];
  userMessage: TraceEvent | null;
  turnEnd: TraceEvent | null;
  errors: TraceEvent[];
  primitives: TraceEvent[];
  toolCalls: TraceEvent[];
}

export interface ParsedTrace {
  events: TraceEvent[];
  /** File line number (1-based) of each event. */
  lines: number[];
  problems: TraceProblem[];
  runId: string | null;
  runStart: TraceEvent | null;
  runEnd: TraceEvent | null;
  agents: string[];
  /** Turn numbers per agent, ascending. */
  turnsByAgent: Map<string, number[]>;
  /** Key `${agent}\u0000${turn}`. */
  turns: Map<string, TurnInfo>;
  /** Session history per agent: history_index -> message record. */
  history: Map<string, Map<number, MessageRecord>>;
  errors: TraceEvent[];
  bytes: number;
}

const turnKey = (agent: string, turn: number): string => `${agent}\u0000${turn}`;

function excerptOf(text: string): string {
  return text.length > 160 ? text.slice(0, 160) + '…' : text;
}

/** Why a parsed JSON value is not a trace event, or null when it is one. */
function envelopeProblem(value: unknown): string | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return 'not a JSON object';
  }
  const ev = value as Record<string, unknown>;
  if (typeof ev.event_type !== 'string') {
    return 'missing "event_type"';
  }
  if (ev.turn !== undefined && ev.turn !== null && typeof ev.turn !== 'number') {
    return '"turn" is not a number or null';
  }
  if (ev.metadata !== undefined && ev.metadata !== null && typeof ev.metadata !== 'object') {
    return '"metadata" is not an object';
  }
  return null;
}

/**
 * Parse the text of a trace file. Never throws: unreadable lines become problems, and a torn
 * last line (no final newline, not valid JSON) is reported as such with every event before it kept.
 */
export function parseTrace(text: string): ParsedTrace {
  const events: TraceEvent[] = [];
  const lines: number[] = [];
  const problems: TraceProblem[] = [];
  const endsWithNewline = text.length === 0 || text.endsWith('\n');
  let start = 0;
  let lineNo = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    const last = end === -1;
    if (last) {
      end = text.length;
    }
    lineNo += 1;
    let raw = text.slice(start, end);
    start = end + 1;
    if (raw.endsWith('\r')) {
      raw = raw.slice(0, -1);
    }
    if (raw.trim() === '') {
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      const torn = last && !endsWithNewline;
      problems.push({
        line: lineNo,
        torn,
        problem: torn
          ? 'torn last line (the trace is probably still being written): ' + String((err as Error).message)
          : 'invalid JSON: ' + String((err as Error).message),
        excerpt: excerptOf(raw)
      });
      continue;
    }
    const bad = envelopeProblem(value);
    if (bad !== null) {
      problems.push({ line: lineNo, torn: false, problem: 'not a trace event: ' + bad, excerpt: excerptOf(raw) });
      continue;
    }
    const ev = value as TraceEvent;
    if (ev.metadata === undefined || ev.metadata === null) {
      ev.metadata = {};
    }
    if (typeof ev.agent !== 'string') {
      ev.agent = 'main';
    }
    if (ev.turn === undefined) {
      ev.turn = null;
    }
    events.push(ev);
    lines.push(lineNo);
  }
  return indexTrace(events, lines, problems, text.length);
}

function stepOf(ev: TraceEvent): number {
  const s = ev.metadata?.step;
  return typeof s === 'number' ? s : 0;
}

function ensureStep(info: TurnInfo, step: number): StepInfo {
  let s = info.steps.find(x => x.step === step);
  if (!s) {
    s = { step, decision: null, snapshot: null, llmCall: null };
    info.steps.push(s);
    info.steps.sort((a, b) => a.step - b.step);
  }
  return s;
}

/** Build the indexes of a list of events (already in file order). */
export function indexTrace(
  events: TraceEvent[],
  lines: number[],
  problems: TraceProblem[],
  bytes = 0
): ParsedTrace {
  const turns = new Map<string, TurnInfo>();
  const turnsByAgent = new Map<string, number[]>();
  const history = new Map<string, Map<number, MessageRecord>>();
  const agents: string[] = [];
  const errors: TraceEvent[] = [];
  let runStart: TraceEvent | null = null;
  let runEnd: TraceEvent | null = null;
  let runId: string | null = null;

  events.forEach((ev, i) => {
    if (runId === null && typeof ev.run_id === 'string') {
      runId = ev.run_id;
    }
    const agent = ev.agent;
    if (!history.has(agent)) {
      history.set(agent, new Map());
      agents.push(agent);
    }
    const md = ev.metadata;
    switch (ev.event_type) {
      case 'run_start':
        runStart = runStart ?? ev;
        break;
      case 'run_end':
        runEnd = ev;
        break;
      case 'error':
        errors.push(ev);
        break;
    }
    if (
      (ev.event_type === 'user_message' || ev.event_type === 'llm_call' || ev.event_type === 'tool_call') &&
      typeof md.history_index === 'number' &&
      md.message &&
      typeof md.message === 'object'
    ) {
      history.get(agent)!.set(md.history_index, md.message as MessageRecord);
    }
    if (typeof ev.turn !== 'number') {
      return;
    }
    const key = turnKey(agent, ev.turn);
    let info = turns.get(key);
    if (!info) {
      info = {
        agent,
        turn: ev.turn,
        events: [],
        steps: [],
        userMessage: null,
        turnEnd: null,
        errors: [],
        primitives: [],
        toolCalls: []
      };
      turns.set(key, info);
      let list = turnsByAgent.get(agent);
      if (!list) {
        list = [];
        turnsByAgent.set(agent, list);
      }
      list.push(ev.turn);
    }
    info.events.push(i);
    switch (ev.event_type) {
      case 'user_message':
        info.userMessage = info.userMessage ?? ev;
        break;
      case 'turn_end':
        info.turnEnd = ev;
        break;
      case 'error':
        info.errors.push(ev);
        break;
      case 'cognitive_primitive':
        info.primitives.push(ev);
        break;
      case 'tool_call':
        info.toolCalls.push(ev);
        break;
      case 'context_decision':
        ensureStep(info, stepOf(ev)).decision = ev;
        break;
      case 'prompt_snapshot':
        ensureStep(info, stepOf(ev)).snapshot = ev;
        break;
      case 'llm_call':
        ensureStep(info, stepOf(ev)).llmCall = ev;
        break;
    }
  });
  for (const list of turnsByAgent.values()) {
    // Turns normally arrive in order; sort only when they did not (a resumed or merged run).
    for (let i = 1; i < list.length; i++) {
      if (list[i] < list[i - 1]) {
        list.sort((a, b) => a - b);
        break;
      }
    }
  }
  return {
    events,
    lines,
    problems,
    runId,
    runStart,
    runEnd,
    agents,
    turnsByAgent,
    turns,
    history,
    errors,
    bytes
  };
}

export function getTurn(trace: ParsedTrace, agent: string, turn: number): TurnInfo | null {
  return trace.turns.get(turnKey(agent, turn)) ?? null;
}

/** The context decision of (agent, turn, step); step defaults to the turn's first build. */
export function decisionOf(trace: ParsedTrace, agent: string, turn: number, step?: number): ContextDecision | null {
  const info = getTurn(trace, agent, turn);
  if (!info) {
    return null;
  }
  const s = step === undefined ? info.steps.find(x => x.decision) : info.steps.find(x => x.step === step);
  const d = s?.decision?.metadata?.decision;
  return d && typeof d === 'object' && Array.isArray(d.decisions) ? (d as ContextDecision) : null;
}

/** The prompt recorded by a prompt_snapshot event, or null when snapshots were off. */
export function promptOf(trace: ParsedTrace, agent: string, turn: number, step = 0): MessageRecord[] | null {
  const info = getTurn(trace, agent, turn);
  const snap = info?.steps.find(x => x.step === step)?.snapshot;
  const msgs = snap?.metadata?.messages;
  return Array.isArray(msgs) ? (msgs as MessageRecord[]) : null;
}

/** The original text of the message a decision is about, when the trace recorded it. */
export function messageFor(
  trace: ParsedTrace,
  agent: string,
  turn: number,
  d: MessageDecision,
  step?: number
): MessageRecord | null {
  const info = getTurn(trace, agent, turn);
  if (!info) {
    return null;
  }
  const src = d.source ?? 'history';
  if (src === 'history') {
    return trace.history.get(agent)?.get(d.index) ?? null;
  }
  if (src === 'input') {
    const m = info.userMessage?.metadata?.message;
    return m && typeof m === 'object' ? (m as MessageRecord) : null;
  }
  const s = step === undefined ? info.steps.find(x => x.decision) : info.steps.find(x => x.step === step);
  const inputs = s?.decision?.metadata?.inputs;
  if (src === 'pin' && inputs && Array.isArray(inputs.pins)) {
    const p = inputs.pins.find((x: any) => x && (x.pin_id === d.section || x.id === d.section));
    if (p) {
      return { role: d.role, content: typeof p.content === 'string' ? p.content : null };
    }
  }
  if (src === 'section' && inputs && Array.isArray(inputs.sections)) {
    const sec = inputs.sections.find((x: any) => x && x.name === d.section);
    if (sec) {
      return { role: d.role, content: typeof sec.content === 'string' ? sec.content : null };
    }
  }
  return null;
}

/** A pin as the viewer shows it at a turn. */
export interface ActivePin {
  pin_id: string;
  label: string | null;
  content: string | null;
  until_turn: number | null;
  created_turn: number | null;
}

function asRecord(v: unknown): Record<string, any> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : {};
}

function numOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/**
 * The pins in effect for `agent` once every event of `turn` has happened: each successful `pin`
 * primitive at or before the turn, minus those unpinned at or before it, minus those whose
 * `until_turn` has passed. Duplicate pins (already_pinned) keep the original label.
 */
export function activePins(trace: ParsedTrace, agent: string, turn: number): ActivePin[] {
  const pins = new Map<string, ActivePin>();
  const turns = trace.turnsByAgent.get(agent) ?? [];
  for (const t of turns) {
    if (t > turn) {
      break;
    }
    const info = trace.turns.get(turnKey(agent, t));
    if (!info) {
      continue;
    }
    for (const ev of info.primitives) {
      const md = ev.metadata;
      const args = asRecord(md.args);
      const result = asRecord(md.result);
      if (md.primitive === 'pin') {
        if (result.pinned === false || result.ok === false) {
          continue;
        }
        const id = result.pin_id ?? args.pin_id;
        if (typeof id !== 'string' || pins.has(id)) {
          continue;
        }
        pins.set(id, {
          pin_id: id,
          label: typeof (result.label ?? args.label) === 'string' ? (result.label ?? args.label) : null,
          content: typeof args.content === 'string' ? args.content : typeof result.content === 'string' ? result.content : null,
          until_turn: numOrNull(result.until_turn ?? args.until_turn),
          created_turn: t
        });
      } else if (md.primitive === 'unpin') {
        if (result.ok === false || result.unpinned === false) {
          continue;
        }
        const id = args.pin_id ?? result.pin_id;
        if (typeof id === 'string') {
          pins.delete(id);
        }
      }
    }
  }
  return [...pins.values()].filter(p => p.until_turn === null || turn <= p.until_turn);
}

/** A stable identity for a message across turns, so two turns' decisions can be lined up. */
export function messageKey(trace: ParsedTrace, agent: string, turn: number, d: MessageDecision): string {
  const src = d.source ?? 'history';
  if (src === 'history') {
    return `h:${d.index}`;
  }
  if (src === 'input') {
    const hi = getTurn(trace, agent, turn)?.userMessage?.metadata?.history_index;
    return typeof hi === 'number' ? `h:${hi}` : `input:${turn}`;
  }
  return `${src}:${d.section ?? d.index}`;
}

export type ChangeKind = 'added' | 'removed' | 'outcome' | 'fidelity' | 'tokens';

export interface DiffRow {
  key: string;
  role: string;
  source: string;
  label: string;
  a: MessageDecision | null;
  b: MessageDecision | null;
  changes: ChangeKind[];
}

export interface TurnDiff {
  agent: string;
  turnA: number;
  turnB: number;
  rows: DiffRow[];
  unchanged: number;
  tokensA: number;
  tokensB: number;
  countsA: Record<string, number>;
  countsB: Record<string, number>;
}

function labelOf(d: MessageDecision): string {
  const src = d.source ?? 'history';
  if (src === 'history') {
    return `#${d.index}`;
  }
  if (src === 'input') {
    return 'input';
  }
  return `${src}:${d.section ?? d.index}`;
}

function outcomeCounts(ds: MessageDecision[]): Record<string, number> {
  const c: Record<string, number> = {};
  for (const d of ds) {
    c[d.outcome] = (c[d.outcome] ?? 0) + 1;
  }
  return c;
}

/**
 * Which messages changed between the first builds of two turns: outcome, fidelity or tokens sent,
 * plus messages present in only one of them. Rows come in turn B's order, then removed ones.
 */
export function diffTurns(trace: ParsedTrace, agent: string, turnA: number, turnB: number): TurnDiff {
  const da = decisionOf(trace, agent, turnA)?.decisions ?? [];
  const db = decisionOf(trace, agent, turnB)?.decisions ?? [];
  const mapA = new Map<string, MessageDecision>();
  for (const d of da) {
    mapA.set(messageKey(trace, agent, turnA, d), d);
  }
  const seen = new Set<string>();
  const rows: DiffRow[] = [];
  let unchanged = 0;
  for (const b of db) {
    const key = messageKey(trace, agent, turnB, b);
    seen.add(key);
    const a = mapA.get(key) ?? null;
    const changes: ChangeKind[] = [];
    if (!a) {
      changes.push('added');
    } else {
      if (a.outcome !== b.outcome) {
        changes.push('outcome');
      }
      if ((a.fidelity ?? null) !== (b.fidelity ?? null)) {
        changes.push('fidelity');
      }
      if (a.token_count_after !== b.token_count_after) {
        changes.push('tokens');
      }
    }
    if (changes.length === 0) {
      unchanged += 1;
      continue;
    }
    rows.push({ key, role: b.role, source: b.source ?? 'history', label: labelOf(b), a, b, changes });
  }
  for (const a of da) {
    const key = messageKey(trace, agent, turnA, a);
    if (!seen.has(key)) {
      rows.push({ key, role: a.role, source: a.source ?? 'history', label: labelOf(a), a, b: null, changes: ['removed'] });
    }
  }
  const sum = (ds: MessageDecision[]) => ds.reduce((n, d) => n + (d.token_count_after || 0), 0);
  return {
    agent,
    turnA,
    turnB,
    rows,
    unchanged,
    tokensA: sum(da),
    tokensB: sum(db),
    countsA: outcomeCounts(da),
    countsB: outcomeCounts(db)
  };
}

/** Text of a message's content (content may be null when the trace keeps no content). */
export function contentText(m: MessageRecord | null | undefined): string | null {
  if (!m) {
    return null;
  }
  if (typeof m.content === 'string') {
    return m.content;
  }
  return null;
}
