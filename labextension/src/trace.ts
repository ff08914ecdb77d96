/**
 * Reading a trace file (docs/TRACE_FORMAT.md): parse once, index by (agent, turn), and answer
 * the viewer's questions — the decisions and prompt of a turn, the pins active at a turn, the
 * difference between two turns, the run's errors — without rescanning the events.
 *
 * Pure logic, no DOM and no JupyterLab imports: the unit tests run it under plain node.
 */

import { canonicalJson, parseKeepingFloats, PyFloat, sha256Hex } from './sha256';
import type { ContextDecision, MessageDecision, MessageRecord, TraceEvent } from './types';

/**
 * A line that could not be read (`kind: 'line'`; a torn last line, a trace still being written, is
 * a warning), or an event that was read but whose content cannot be used (`kind: 'event'`: a
 * context decision stored as a delta whose base is missing or does not match it).
 */
export interface TraceProblem {
  line: number;
  problem: string;
  torn: boolean;
  excerpt: string;
  kind: 'line' | 'event';
  /** The event's id, for `kind: 'event'`. */
  eventId?: string | null;
}

/** One LLM call's build inside a turn: its decision and, when recorded, the prompt snapshot. */
export interface StepInfo {
  step: number;
  decision: TraceEvent | null;
  snapshot: TraceEvent | null;
  /** The prompt_sent event of this call (the prompt as sent; see sentPromptOf). */
  sent: TraceEvent | null;
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
  /**
   * Context decisions stored as a delta (arcana_jupyter/trace/decision_delta.py): the event -> the
   * keyframe event it is a delta against. Every delta here was checked at index time; its rows are
   * rebuilt on demand (decisionOfEvent) and only the last few are kept.
   */
  deltaBases: Map<TraceEvent, TraceEvent>;
  /** Context decisions that cannot be read (a delta with a missing or inconsistent base): the event -> why. */
  decisionProblems: Map<TraceEvent, string>;
  /** The most recently rebuilt delta decisions (bounded, least recently used first). */
  resolvedDecisions: Map<TraceEvent, ContextDecision>;
  /**
   * Chained decisions (encoding 2, `metadata.chain`): the event -> its chain record and the previous
   * decision's event. Their metadata is resolved at index time (what `chain.same` stands for put
   * back); their rows are decoded on demand from the previous decision's (see `decisionOfEvent`).
   */
  chained: Map<TraceEvent, ChainLink>;
  /** Decoded rows of recently read chained decisions (bounded, least recently used first). */
  chainRows: Map<TraceEvent, ChainColumns>;
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
        excerpt: excerptOf(raw),
        kind: 'line'
      });
      continue;
    }
    const bad = envelopeProblem(value);
    if (bad !== null) {
      problems.push({ line: lineNo, torn: false, problem: 'not a trace event: ' + bad, excerpt: excerptOf(raw), kind: 'line' });
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
    if (ev.event_type === 'context_decision' && raw.includes('"tools":')) {
      keepToolFloats(ev.metadata, raw);
    }
    events.push(ev);
    lines.push(lineNo);
  }
  return indexTrace(events, lines, problems, text.length);
}

/**
 * The decision's tool specs with the floats Python wrote as floats (`"minimum": 1.0`) kept as such
 * (`PyFloat`), read again from the line's text: the request digest covers the specs as Python
 * serialised them, and `JSON.parse` would make `1.0` the `1` that `JSON.stringify` writes. Only when
 * a spec holds such a number; the specs are otherwise left as parsed.
 */
function keepToolFloats(md: Record<string, any>, raw: string): void {
  const tools = md.tools;
  if (!Array.isArray(tools) || !tools.length) {
    return;
  }
  const want = JSON.stringify(tools);
  for (let at = raw.indexOf('"tools":'); at >= 0; at = raw.indexOf('"tools":', at + 1)) {
    let parsed: unknown;
    try {
      parsed = parseKeepingFloats(raw, at + 8).value;
    } catch {
      continue;
    }
    if (JSON.stringify(parsed) === want) { // the metadata's own `tools` (a message could hold the same key)
      if (hasPyFloat(parsed)) {
        md.tools = parsed;
      }
      return;
    }
  }
}

function hasPyFloat(v: unknown): boolean {
  if (v instanceof PyFloat) {
    return true;
  }
  if (Array.isArray(v)) {
    return v.some(hasPyFloat);
  }
  return v !== null && typeof v === 'object' && Object.values(v as Record<string, unknown>).some(hasPyFloat);
}

function stepOf(ev: TraceEvent): number {
  const s = ev.metadata?.step;
  return typeof s === 'number' ? s : 0;
}

function ensureStep(info: TurnInfo, step: number): StepInfo {
  let s = info.steps.find(x => x.step === step);
  if (!s) {
    s = { step, decision: null, snapshot: null, sent: null, llmCall: null };
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
  // Context decisions by event_id (the first one wins, as in TraceReader), and the delta-encoded ones.
  const decisionById = new Map<string, TraceEvent>();
  const deltaEvents: number[] = [];
  const chainEvents: number[] = [];

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
      case 'context_decision':
        if (typeof ev.event_id === 'string' && !decisionById.has(ev.event_id)) {
          decisionById.set(ev.event_id, ev);
        }
        if (isPlainObject(md.chain)) {
          chainEvents.push(i);
        } else if (md.decision && typeof md.decision === 'object' && pyTruthy(md.decision.decisions_delta)) {
          deltaEvents.push(i);
        }
        break;
    }
    if (
      // turn_end: a cancelled turn's closing message (the partial reply and the interruption note)
      (ev.event_type === 'user_message' || ev.event_type === 'llm_call' || ev.event_type === 'tool_call' ||
        ev.event_type === 'turn_end') &&
      typeof md.history_index === 'number' &&
      md.message &&
      typeof md.message === 'object'
    ) {
      history.get(agent)!.set(md.history_index, md.message as MessageRecord);
    }
    if (typeof ev.turn !== 'number' || ev.turn < 1) {
      return; // turn 0: before the first turn (a pin or memory the user added first) — not a turn
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
      case 'prompt_sent': {
        const st = ensureStep(info, stepOf(ev));
        st.sent = st.sent ?? ev;
        break;
      }
      case 'llm_call':
        ensureStep(info, stepOf(ev)).llmCall = ev;
        break;
    }
  });
  // Check every delta against its base now (cheap: ranges and lengths, no rows are built), so a
  // bad one is listed with the trace's problems and its turn shows why it has no decisions.
  const deltaBases = new Map<TraceEvent, TraceEvent>();
  const decisionProblems = new Map<TraceEvent, string>();
  for (const i of deltaEvents) {
    const ev = events[i];
    const delta = ev.metadata.decision.decisions_delta;
    const baseId = delta && typeof delta === 'object' && !Array.isArray(delta) ? delta.base : undefined;
    const baseEv = typeof baseId === 'string' ? decisionById.get(baseId) : undefined;
    const plan = planDelta(delta, baseEv ? baseEv.metadata.decision : null);
    if (typeof plan === 'string') {
      decisionProblems.set(ev, plan);
      problems.push({
        line: lines[i] ?? 0,
        torn: false,
        kind: 'event',
        eventId: typeof ev.event_id === 'string' ? ev.event_id : null,
        problem: `context_decision ${typeof ev.event_id === 'string' ? ev.event_id : '(no event_id)'}` +
          (typeof ev.turn === 'number' ? ` (turn ${ev.turn}, step ${stepOf(ev)})` : '') + `: ${plan}`,
        excerpt: excerptOf('decisions_delta: ' + deltaSummary(delta))
      });
    } else {
      deltaBases.set(ev, baseEv!);
    }
  }
  const chained = new Map<TraceEvent, ChainLink>();
  const rawChain = new Map<TraceEvent, Record<string, any>>();
  const chainFailed = new Map<TraceEvent, string>();
  for (const i of chainEvents) {
    rawChain.set(events[i], events[i].metadata);
  }
  for (const i of chainEvents) {
    const ev = events[i];
    const problem = linkChain(ev, decisionById, chained, rawChain, chainFailed);
    if (problem !== null) {
      decisionProblems.set(ev, problem);
      problems.push({
        line: lines[i] ?? 0,
        torn: false,
        kind: 'event',
        eventId: typeof ev.event_id === 'string' ? ev.event_id : null,
        problem: `context_decision ${typeof ev.event_id === 'string' ? ev.event_id : '(no event_id)'}` +
          (typeof ev.turn === 'number' ? ` (turn ${ev.turn}, step ${stepOf(ev)})` : '') + `: ${problem}`,
        excerpt: excerptOf('chain: ' + (JSON.stringify(rawChain.get(ev)?.chain ?? null) ?? ''))
      });
    }
  }
  if (decisionProblems.size) {
    problems.sort((a, b) => a.line - b.line);
  }
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
    bytes,
    deltaBases,
    decisionProblems,
    resolvedDecisions: new Map(),
    chained,
    chainRows: new Map()
  };
}

export function getTurn(trace: ParsedTrace, agent: string, turn: number): TurnInfo | null {
  return trace.turns.get(turnKey(agent, turn)) ?? null;
}

function decisionEventOf(trace: ParsedTrace, agent: string, turn: number, step?: number): TraceEvent | null {
  const info = getTurn(trace, agent, turn);
  if (!info) {
    return null;
  }
  const s = step === undefined ? info.steps.find(x => x.decision) : info.steps.find(x => x.step === step);
  return s?.decision ?? null;
}

/** How many rebuilt delta decisions are kept (the viewer needs the selected turn and a diff's two). */
const RESOLVED_CACHE = 16;

/**
 * The full decision of a `context_decision` event: as recorded, or rebuilt from its delta against
 * its keyframe. Null when the event has no decision list or the delta could not be resolved (see
 * `trace.decisionProblems`).
 */
export function decisionOfEvent(trace: ParsedTrace, ev: TraceEvent | null | undefined): ContextDecision | null {
  const d = ev?.metadata?.decision;
  if (!ev || !d || typeof d !== 'object' || trace.decisionProblems.has(ev)) {
    return null;
  }
  if (trace.chained.has(ev)) {
    return chainedDecision(trace, ev);
  }
  const base = trace.deltaBases.get(ev);
  if (!base) {
    return Array.isArray(d.decisions) ? (d as ContextDecision) : null;
  }
  const cache = trace.resolvedDecisions;
  let full = cache.get(ev);
  if (full) {
    cache.delete(ev); // most recently used last
  } else {
    full = resolveDecision(d, () => base.metadata.decision) as unknown as ContextDecision;
    if (cache.size >= RESOLVED_CACHE) {
      cache.delete(cache.keys().next().value!);
    }
  }
  cache.set(ev, full);
  return full;
}

/** The context decision of (agent, turn, step); step defaults to the turn's first build. */
export function decisionOf(trace: ParsedTrace, agent: string, turn: number, step?: number): ContextDecision | null {
  return decisionOfEvent(trace, decisionEventOf(trace, agent, turn, step));
}

/** Why the context decision of (agent, turn, step) cannot be read, or null when it can (or there is none). */
export function decisionProblemOf(trace: ParsedTrace, agent: string, turn: number, step?: number): string | null {
  const ev = decisionEventOf(trace, agent, turn, step);
  return ev ? trace.decisionProblems.get(ev) ?? null : null;
}

// ---- decision deltas (arcana_jupyter/trace/decision_delta.py) --------------------------------

/**
 * A decision list stored as a column-wise delta against a keyframe: per column, the half-open
 * ranges of positions equal to the base's column at the same positions, and the other values in order.
 */
export interface DecisionDelta {
  base: string;
  count: number;
  columns: Record<string, { same: Array<[number, number]>; values: unknown[] }>;
}

/** Python truthiness of a JSON value (`if not delta` in resolve_decision). */
function pyTruthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') {
    return false;
  }
  if (Array.isArray(v)) {
    return v.length > 0;
  }
  if (typeof v === 'object') {
    return Object.keys(v as object).length > 0;
  }
  return true;
}

/** Python's `int(x)` of a JSON value, or null where it raises. */
function pyInt(v: unknown): number | null {
  if (typeof v === 'boolean') {
    return v ? 1 : 0;
  }
  if (typeof v === 'number') {
    return Number.isFinite(v) ? Math.trunc(v) : null;
  }
  if (typeof v === 'string' && /^\s*[+-]?\d+(?:_\d+)*\s*$/.test(v)) {
    return parseInt(v.replace(/_/g, ''), 10);
  }
  return null;
}

/** A slice bound as Python accepts it (an int or a bool), or null. */
function pyIndex(v: unknown): number | null {
  if (typeof v === 'boolean') {
    return v ? 1 : 0;
  }
  return typeof v === 'number' && Number.isInteger(v) ? v : null;
}

/** `seq[a:b]` of a sequence of length `len`, as [start, end) (Python's clamping and negative indices). */
function pySlice(len: number, a: number, b: number): [number, number] {
  const norm = (x: number) => (x < 0 ? Math.max(0, len + x) : Math.min(x, len));
  const s = norm(a);
  return [s, Math.max(s, norm(b))];
}

/** Python's repr of a str (enough for column names in messages). */
function pyRepr(s: string): string {
  return s.includes("'") && !s.includes('"') ? `"${s}"` : `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function isPlainObject(v: unknown): v is Record<string, any> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function deltaSummary(delta: unknown): string {
  if (!isPlainObject(delta)) {
    return excerptOf(JSON.stringify(delta) ?? String(delta));
  }
  const cols = isPlainObject(delta.columns) ? Object.keys(delta.columns) : delta.columns;
  return JSON.stringify({ base: delta.base, count: delta.count, columns: cols }) ?? '';
}

interface ColumnPlan {
  key: string;
  /** The `same` ranges, sorted as Python sorts them. */
  ranges: Array<[number, number]>;
  values: unknown[];
  /** Whether the base has this column (its first row's keys, as decision_delta.columns reads them). */
  inBase: boolean;
}

interface DeltaPlan {
  count: number;
  columns: ColumnPlan[];
  baseRows: Array<Record<string, unknown>>;
}

/** Base rows already checked to be objects (resolve_decision reads them with `row.get`). */
const checkedBaseRows = new WeakSet<unknown[]>();

/**
 * Check a delta against its base decision exactly as resolve_decision would read it, without
 * building a row: the plan to rebuild it, or why it cannot be (Python's message where it has one).
 * Costs O(ranges) per column, so every delta of a long trace is checked at index time.
 */
function planDelta(delta: unknown, base: unknown): DeltaPlan | string {
  if (!isPlainObject(delta)) {
    return 'decisions_delta is not an object';
  }
  if (!('base' in delta)) {
    return 'decisions_delta has no "base"';
  }
  const baseId = typeof delta.base === 'string' ? delta.base : JSON.stringify(delta.base);
  if (!isPlainObject(base) || base.decisions === null || base.decisions === undefined) {
    return `decision delta refers to ${baseId}, which is not a full decision in this trace`;
  }
  const rows = base.decisions;
  if (!Array.isArray(rows)) {
    return `decision delta refers to ${baseId}, whose decisions are not a list`;
  }
  if (!checkedBaseRows.has(rows)) {
    if (!rows.every(isPlainObject)) {
      return `decision delta refers to ${baseId}, whose decisions are not all objects`;
    }
    checkedBaseRows.add(rows);
  }
  const baseKeys = new Set(rows.length ? Object.keys(rows[0]) : []);
  if (!('count' in delta)) {
    return `decision delta against ${baseId} has no "count"`;
  }
  const count = pyInt(delta.count);
  if (count === null) {
    return `decision delta against ${baseId}: "count" is not an integer`;
  }
  if (!isPlainObject(delta.columns)) {
    return `decision delta against ${baseId}: "columns" is ${'columns' in delta ? 'not an object' : 'missing'}`;
  }
  const columns: ColumnPlan[] = [];
  for (const [key, spec] of Object.entries(delta.columns)) {
    const where = `decision delta against ${baseId}: column ${pyRepr(key)}`;
    if (!isPlainObject(spec) || !Array.isArray(spec.values) || !Array.isArray(spec.same)) {
      return `${where} is not {"same": [...], "values": [...]}`;
    }
    const ranges: Array<[number, number]> = [];
    for (const r of spec.same as unknown[]) {
      const a = Array.isArray(r) && r.length === 2 ? pyIndex(r[0]) : null;
      const b = Array.isArray(r) && r.length === 2 ? pyIndex(r[1]) : null;
      if (a === null || b === null) {
        return `${where}: ${excerptOf(JSON.stringify(r) ?? String(r))} is not a range [start, end]`;
      }
      ranges.push([a, b]);
    }
    ranges.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    const values = spec.values as unknown[];
    const inBase = baseKeys.has(key);
    const baseLen = inBase ? rows.length : 0;
    // resolve_decision's loop, counting instead of copying.
    let pos = 0;
    let used = 0;
    let len = 0;
    for (const [a, b] of ranges) {
      if (pos < a) {
        const need = a - pos;
        if (used + need > values.length) {
          return `${where} has fewer values than its ranges need`;
        }
        used += need;
        len += need;
      }
      const [s, e] = pySlice(baseLen, a, b);
      len += e - s;
      pos = b;
    }
    len += values.length - used;
    if (len !== count) {
      return `decision delta against ${baseId}: column ${pyRepr(key)} resolves to ${len} values, expected ${count}`;
    }
    columns.push({ key, ranges, values, inBase });
  }
  if (count < 0) {
    // Only reachable with no columns: Python's range(count) is then empty.
    return { count: 0, columns, baseRows: rows };
  }
  return { count, columns, baseRows: rows };
}

/** Rebuild the rows of a checked delta (resolve_decision's loop). */
function applyPlan(plan: DeltaPlan): Array<Record<string, unknown>> {
  const { count, baseRows } = plan;
  const hasOwn = Object.prototype.hasOwnProperty;
  const cols = plan.columns.map(({ key, ranges, values, inBase }) => {
    const baseLen = inBase ? baseRows.length : 0;
    const col: unknown[] = new Array(count);
    let k = 0;
    let vi = 0;
    let pos = 0;
    for (const [a, b] of ranges) {
      while (pos < a) {
        col[k++] = values[vi++];
        pos += 1;
      }
      const [s, e] = pySlice(baseLen, a, b);
      for (let i = s; i < e; i++) {
        const row = baseRows[i];
        col[k++] = hasOwn.call(row, key) ? row[key] : null;
      }
      pos = b;
    }
    while (vi < values.length) {
      col[k++] = values[vi++];
    }
    return col;
  });
  const keys = plan.columns.map(c => c.key);
  const unsafe = keys.includes('__proto__');
  const out: Array<Record<string, unknown>> = new Array(count);
  for (let i = 0; i < count; i++) {
    const row: Record<string, unknown> = {};
    for (let j = 0; j < keys.length; j++) {
      if (unsafe && keys[j] === '__proto__') {
        Object.defineProperty(row, '__proto__', { value: cols[j][i], enumerable: true, writable: true, configurable: true });
      } else {
        row[keys[j]] = cols[j][i];
      }
    }
    out[i] = row;
  }
  return out;
}

/**
 * `resolve_decision` of arcana_jupyter/trace/decision_delta.py: the decision with its full
 * `decisions` list. `loadBase(eventId)` returns that event's `decision` (a keyframe). A decision
 * without a delta comes back as it is; a delta that cannot be resolved throws an Error.
 */
export function resolveDecision(
  decision: Record<string, any>,
  loadBase: (eventId: string) => Record<string, any> | null | undefined
): Record<string, any> {
  const delta = decision.decisions_delta;
  if (!pyTruthy(delta)) {
    return decision;
  }
  const base = isPlainObject(delta) && typeof delta.base === 'string' ? loadBase(delta.base) ?? null : null;
  const plan = planDelta(delta, base);
  if (typeof plan === 'string') {
    throw new Error(plan);
  }
  const full: Record<string, any> = { ...decision }; // spread defines keys (a "__proto__" key stays data)
  delete full.decisions_delta;
  full.decisions = applyPlan(plan);
  return full;
}

// ---- chained decisions (encoding 2, arcana_jupyter/trace/decision_delta.py) -----------------------

/** The metadata a chained decision may take from the previous one (`chain.same`). */
const SAME_PATHS = ['tools', 'builder', 'calibration', 'shape', 'tool_loop', 'inputs.pins', 'inputs.sections',
  'inputs.task', 'inputs.overflow'];
const CHAIN_VERSION = 2;
const Q = 10000;

/** A chained decision as indexed: its chain record (as written) and the previous decision's event. */
export interface ChainLink {
  chain: Record<string, any>;
  prev: TraceEvent | null;
  /** Its rows' column names: `chain.rows.keys`, or the previous decision's when a delta leaves them out. */
  keys: string[];
}

/** A chained decision's rows, decoded: one array per column. */
export interface ChainColumns {
  keys: string[];
  count: number;
  cols: Map<string, unknown[]>;
}

/** How many decoded chained decisions are kept (a walk forward from a keyframe reuses them). */
const CHAIN_CACHE = 16;

const NO_ROW: unique symbol = Symbol('no aligned row');

function isPyInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

function expandRuns(runs: unknown, where: string): number[] {
  if (!Array.isArray(runs)) {
    throw new Error(`${where} is not a list of runs`);
  }
  const out: number[] = [];
  for (const r of runs) {
    if (!(Array.isArray(r) && r.length === 2 && isPyInt(r[0]) && isPyInt(r[1]) && r[0] <= r[1])) {
      throw new Error(`${where}: ${excerptOf(JSON.stringify(r) ?? String(r))} is not a run [first, last]`);
    }
    if (r[1] - r[0] > 10_000_000) {
      throw new Error(`${where}: the run ${JSON.stringify(r)} is implausibly long`);
    }
    for (let v = r[0]; v <= r[1]; v++) {
      out.push(v);
    }
  }
  return out;
}

function movedOf(runs: unknown, where: string): Record<string, unknown[]> {
  if (!Array.isArray(runs)) {
    throw new Error(`${where}: chain.moved is not a list of runs`);
  }
  const out: Record<string, unknown[]> = {};
  for (const r of runs) {
    if (!(Array.isArray(r) && (r.length === 4 || r.length === 5) && isPyInt(r[0]) && isPyInt(r[1]) && r[0] >= 0 &&
      r[1] > 0 && r[1] <= 1_000_000 && typeof r[2] === 'string' && isPyInt(r[3]) &&
      (r.length === 4 || r[4] === 0 || r[4] === 1))) {
      throw new Error(`${where}: chain.moved has ${excerptOf(JSON.stringify(r) ?? String(r))}, not [position, count, how, index(, step)]`);
    }
    const step = r.length === 5 ? r[4] : 1;
    for (let k = 0; k < r[1]; k++) {
      out[String(r[0] + k)] = [r[2], r[3] + step * k];
    }
  }
  return out;
}

/** The metadata a chained decision may record as a patch of the previous decision's (`chain.patch`). */
const PATCH_KEYS = ['decision', 'report', 'budget'];
/** How a decision's metadata starts (`_META_ORDER` in Python): where a patched key is put back. */
const META_ORDER = ['step', 'decision', 'report', 'budget', 'request_digest', 'history_len', 'inputs'];
const DELETE: unique symbol = Symbol('removed');

/**
 * `apply_patch`: `base` with a patch applied — `{key: p}`, `p` one of `[value]` (set), `[]` (removed),
 * `[a, text, b]` (the base string's first a characters, text, its last b) or a patch (of an object, or
 * of a list of the same length: keys "0", "1" ...). Throws where Python raises.
 */
export function applyPatch(base: unknown, patch: unknown, where: string): unknown {
  if (!isPlainObject(patch)) {
    throw new Error(`${where}: ${excerptOf(JSON.stringify(patch) ?? String(patch))} is not a patch`);
  }
  if (isPlainObject(base)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(base)) {
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
    for (const [k, p] of Object.entries(patch)) {
      const present = Object.prototype.hasOwnProperty.call(base, k);
      const value = applyValue(present ? (base as Record<string, unknown>)[k] : undefined, present, p, `${where}.${k}`);
      if (value === DELETE) {
        delete out[k];
      } else {
        Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
      }
    }
    return out;
  }
  if (Array.isArray(base)) {
    const items = base.slice();
    for (const [k, p] of Object.entries(patch)) {
      if (!(/^[0-9]+$/.test(k) && Number(k) < items.length)) {
        throw new Error(`${where}: a patch of a list of ${items.length} has the position ${excerptOf(JSON.stringify(k))}`);
      }
      const value = applyValue(items[Number(k)], true, p, `${where}[${k}]`);
      if (value === DELETE) {
        throw new Error(`${where}[${k}]: a patch removes an item of a list`);
      }
      items[Number(k)] = value;
    }
    return items;
  }
  throw new Error(`${where}: a patch of ${excerptOf(JSON.stringify(base) ?? String(base))}, which is neither an object nor a list`);
}

function applyValue(base: unknown, present: boolean, p: unknown, where: string): unknown {
  if (isPlainObject(p)) {
    if (!present) {
      throw new Error(`${where}: a patch of a value the previous decision does not have`);
    }
    return applyPatch(base, p, where);
  }
  if (!Array.isArray(p) || ![0, 1, 3].includes(p.length)) {
    throw new Error(`${where}: ${excerptOf(JSON.stringify(p) ?? String(p))} is not [], [value], [a, text, b] or a patch`);
  }
  if (p.length === 0) {
    return DELETE;
  }
  if (p.length === 1) {
    return p[0];
  }
  const [a, text, b] = p;
  if (!(isPyInt(a) && isPyInt(b) && a >= 0 && b >= 0 && (text === null || typeof text === 'string'))) {
    throw new Error(`${where}: ${excerptOf(JSON.stringify(p))} is not [a, text, b]`);
  }
  if (text === null || base === null) {
    return null;
  }
  if (typeof base !== 'string' || a + b > base.length) {
    throw new Error(`${where}: [a, text, b] edits ${excerptOf(JSON.stringify(base) ?? String(base))}, not a text of at least ${a + b} characters`);
  }
  return base.slice(0, a) + text + base.slice(base.length - b);
}

/**
 * `resolve_sections`: `chain.sections` against the previous decision's resolved `inputs.sections` —
 * `{"p": i | [i, n]}` those sections, `{"e": i, "content": ops}` section i with its content line-edited,
 * anything else a section as it is. Throws where Python raises.
 */
export function resolveSections(items: unknown, prev: unknown, where: string): unknown[] {
  if (!Array.isArray(items)) {
    throw new Error(`${where}: chain.sections is not a list`);
  }
  const out: unknown[] = [];
  for (const item of items) {
    if (!isPlainObject(item)) {
      throw new Error(`${where}: chain.sections has ${excerptOf(JSON.stringify(item) ?? String(item))}, not a section or a reference`);
    }
    const keys = Object.keys(item);
    if ('p' in item && keys.length === 1) {
      const ref = item.p;
      let start = -1;
      let n = 0;
      if (isPyInt(ref)) {
        [start, n] = [ref, 1];
      } else if (Array.isArray(ref) && ref.length === 2 && isPyInt(ref[0]) && isPyInt(ref[1])) {
        [start, n] = [ref[0], ref[1]];
      }
      if (!Array.isArray(prev) || start < 0 || n < 1 || start + n > prev.length) {
        throw new Error(`${where}: chain.sections refers to previous sections ${excerptOf(JSON.stringify(ref) ?? String(ref))}, which do not exist`);
      }
      out.push(...prev.slice(start, start + n));
    } else if ('e' in item && 'content' in item && keys.length === 2) {
      const j = item.e;
      if (!isPyInt(j) || !Array.isArray(prev) || j < 0 || j >= prev.length || !isPlainObject(prev[j])) {
        throw new Error(`${where}: chain.sections edits previous section ${excerptOf(JSON.stringify(j) ?? String(j))}, which does not exist`);
      }
      const base = prev[j] as Record<string, any>;
      const content = typeof base.content === 'string' ? base.content : null;
      out.push({ ...base, content: applyLineEdit(content, item.content, `${where}: chain.sections[${out.length}]`) });
    } else {
      out.push(item);
    }
  }
  return out;
}

/**
 * `resolve_chain_metadata`: the metadata with what `chain.same`, `chain.moved` and `chain.overflow`
 * stand for put back and `chain` removed (the rows are decoded apart). Throws where Python raises.
 */
export function resolveChainMetadata(
  meta: Record<string, any>,
  prevMeta: Record<string, any> | null,
  where: string
): Record<string, any> {
  const chain = meta.chain;
  if (!isPlainObject(chain)) {
    throw new Error(`${where}: chain is not an object`);
  }
  const out: Record<string, any> = {};
  for (const [k, v] of Object.entries(meta)) {
    if (k !== 'chain') {
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
  }
  let inputs = out.inputs;
  const same = 'same' in chain ? chain.same : [];
  const overflow = chain.overflow;
  if ((pyTruthy(same) || (overflow !== null && overflow !== undefined)) && isPlainObject(inputs)) {
    inputs = out.inputs = { ...inputs };
  }
  if (!Array.isArray(same) || !same.every(p => typeof p === 'string' && SAME_PATHS.includes(p))) {
    throw new Error(`${where}: chain.same is not a list of ${SAME_PATHS.join(', ')}`);
  }
  if (same.length && prevMeta === null) {
    throw new Error(`${where}: chain.same without a previous decision`);
  }
  for (const path of same as string[]) {
    const dot = path.indexOf('.');
    if (dot < 0) {
      if (prevMeta && Object.prototype.hasOwnProperty.call(prevMeta, path)) {
        out[path] = prevMeta[path];
      }
      continue;
    }
    const tail = path.slice(dot + 1);
    const pin = prevMeta ? prevMeta.inputs : undefined;
    if (isPlainObject(pin) && Object.prototype.hasOwnProperty.call(pin, tail)) {
      if (!isPlainObject(inputs)) {
        inputs = out.inputs = {};
      }
      inputs[tail] = pin[tail];
    }
  }
  const patches = chain.patch;
  if (patches !== undefined && patches !== null) {
    if (!isPlainObject(patches) || !Object.keys(patches).every(k => PATCH_KEYS.includes(k))) {
      throw new Error(`${where}: chain.patch is not an object of ${PATCH_KEYS.join(', ')}`);
    }
    for (const [key, patch] of Object.entries(patches)) {
      if (!prevMeta || !Object.prototype.hasOwnProperty.call(prevMeta, key)) {
        throw new Error(`${where}: chain.patch['${key}'] without a previous ${key}`);
      }
      out[key] = applyPatch(prevMeta[key], patch, `${where}: chain.patch.${key}`);
    }
    // a patched key back at its place (`_in_written_order`): the metadata reads in the order it was written
    const rank = (k: string): number => (META_ORDER.includes(k) ? META_ORDER.indexOf(k) : META_ORDER.length);
    const patched = Object.keys(patches);
    const pending = patched.slice().sort((a, b) => rank(a) - rank(b));
    const ordered: Record<string, any> = {};
    const put = (k: string, v: unknown): void => {
      Object.defineProperty(ordered, k, { value: v, enumerable: true, writable: true, configurable: true });
    };
    for (const [k, v] of Object.entries(out)) {
      if (patched.includes(k)) {
        continue;
      }
      while (pending.length && rank(pending[0]) < rank(k)) {
        const first = pending.shift()!;
        put(first, out[first]);
      }
      put(k, v);
    }
    for (const k of pending) {
      put(k, out[k]);
    }
    for (const k of Object.keys(out)) {
      delete out[k];
    }
    for (const [k, v] of Object.entries(ordered)) {
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
  }
  if ('sections' in chain) {
    const prevInputs = prevMeta ? prevMeta.inputs : undefined;
    const sections = resolveSections(chain.sections, isPlainObject(prevInputs) ? prevInputs.sections : undefined, where);
    inputs = out.inputs = { ...(isPlainObject(inputs) ? inputs : {}), sections };
  }
  if ('moved' in chain) {
    const shape = out.shape;
    if (!isPlainObject(shape)) {
      throw new Error(`${where}: chain.moved without a shape`);
    }
    out.shape = { ...shape, moved: movedOf(chain.moved, where) };
  }
  if (overflow !== null && overflow !== undefined) {
    if (!isPlainObject(overflow)) {
      throw new Error(`${where}: chain.overflow is not an object`);
    }
    if (!isPlainObject(inputs)) {
      inputs = out.inputs = {};
    }
    const expanded: Record<string, number[]> = {};
    for (const [k, v] of Object.entries(overflow)) {
      expanded[k] = expandRuns(v, `${where}: chain.overflow['${k}']`);
    }
    inputs.overflow = expanded;
  }
  return out;
}

/**
 * Link the chained decision `ev` (and any it depends on not linked yet): resolve its metadata in
 * place from the previous decision's. Returns why it cannot be read, or null.
 */
function linkChain(ev: TraceEvent, byId: Map<string, TraceEvent>, chained: Map<TraceEvent, ChainLink>,
  raw: Map<TraceEvent, Record<string, any>>, failed: Map<TraceEvent, string>): string | null {
  if (chained.has(ev)) {
    return null;
  }
  if (failed.has(ev)) {
    return failed.get(ev)!;
  }
  // walk back to a keyframe or a decision already linked, then forward (as ChainResolver does)
  const todo: TraceEvent[] = [ev];
  const seen = new Set<TraceEvent>([ev]);
  let problem: string | null = null;
  for (;;) {
    const cur = todo[todo.length - 1];
    const prevId = raw.get(cur)!.chain.prev;
    if (prevId === null || prevId === undefined) {
      break;
    }
    if (typeof prevId !== 'string') {
      problem = `decision ${cur.event_id}: chain.prev is not an event id`;
      break;
    }
    const prevEv = byId.get(prevId);
    if (prevEv && chained.has(prevEv)) {
      break;
    }
    if (prevEv && failed.has(prevEv)) {
      problem = failed.get(prevEv)!;
      break;
    }
    if (!prevEv || !raw.has(prevEv)) {
      problem = `decision ${cur.event_id}: chain.prev ${prevId} is not a chained decision of this agent in this trace`;
      break;
    }
    if (seen.has(prevEv)) {
      problem = `decision ${cur.event_id}: its chain loops back to ${prevId}`;
      break;
    }
    seen.add(prevEv);
    todo.push(prevEv);
  }
  if (problem !== null) {
    for (const e of todo) {
      failed.set(e, problem);
    }
    return problem;
  }
  for (let i = todo.length - 1; i >= 0; i--) {
    const e = todo[i];
    const meta = raw.get(e)!;
    const prevId = meta.chain.prev;
    const prevEv = typeof prevId === 'string' ? byId.get(prevId) ?? null : null;
    const where = `decision ${e.event_id}`;
    try {
      const resolved = resolveChainMetadata(meta, prevEv ? prevEv.metadata : null, where);
      if (meta.chain.v !== CHAIN_VERSION) {
        throw new Error(`${where}: chain version ${JSON.stringify(meta.chain.v)} is not ${CHAIN_VERSION}`);
      }
      const keys = checkRowsSpec(meta.chain.rows, where,
        prevEv && prevId !== null && prevId !== undefined ? chained.get(prevEv)?.keys ?? null : null);
      e.metadata = resolved;
      chained.set(e, { chain: meta.chain, prev: prevEv, keys });
    } catch (err) {
      const why = String((err as Error).message);
      for (let j = i; j >= 0; j--) {
        failed.set(todo[j], why);
      }
      return failed.get(ev)!;
    }
  }
  return null;
}

/**
 * The cheap checks of `chain.rows` (decode_rows' own, before any column is decoded); returns its keys
 * (`prevKeys`, the previous decision's, when a delta leaves them out).
 */
function checkRowsSpec(spec: unknown, where: string, prevKeys: string[] | null): string[] {
  if (!isPlainObject(spec)) {
    throw new Error(`${where}: chain.rows is not an object`);
  }
  const { count, columns } = spec;
  let keys = spec.keys;
  if (!isPyInt(count) || count < 0) {
    throw new Error(`${where}: chain.rows.count is not a non-negative int`);
  }
  if (!('keys' in spec)) {
    if (prevKeys === null) {
      throw new Error(`${where}: chain.rows.keys is missing, and there is no previous decision to take them from`);
    }
    keys = prevKeys;
  }
  if (!Array.isArray(keys) || !keys.every(k => typeof k === 'string') || new Set(keys).size !== keys.length) {
    throw new Error(`${where}: chain.rows.keys is not a list of distinct names`);
  }
  if (!isPlainObject(columns) || Object.keys(columns).length !== keys.length ||
    !keys.every(k => Object.prototype.hasOwnProperty.call(columns, k))) {
    throw new Error(`${where}: chain.rows.columns does not hold exactly the columns of chain.rows.keys`);
  }
  const align = 'align' in spec ? spec.align : [];
  if (!Array.isArray(align)) {
    throw new Error(`${where}: chain.rows.align is not a list`);
  }
  return keys as string[];
}

function alignedBase(col: unknown[], align: number[][], count: number): unknown[] {
  const out: unknown[] = new Array(count).fill(NO_ROW);
  for (const [start, length, prevStart] of align) {
    const n = Math.min(length, Math.max(0, col.length - prevStart));
    for (let k = 0; k < n; k++) {
      out[start + k] = col[prevStart + k];
    }
  }
  return out;
}

function kOf(x: unknown, where: string, kind = 'qd'): number {
  if (typeof x !== 'number' || !(x >= 0 && x < 2 ** 27)) {
    throw new Error(`${where}: a "${kind}" op adds to a previous value that is not a four-decimal number`);
  }
  const k = Math.round(x * Q);
  if (Math.abs(x * Q - k) > 1e-6) {
    throw new Error(`${where}: a "${kind}" op adds to a previous value that is not a four-decimal number`);
  }
  return k;
}

/** `sparse_positions`: the positions a `["s", [gap, ...], ops]` op at `pos` writes, checked. */
function sparsePositions(op: unknown[], pos: number, count: number, where: string): number[] {
  if (op.length !== 3 || !Array.isArray(op[1]) || !Array.isArray(op[2]) ||
    !op[1].every((g: unknown) => isPyInt(g) && g >= 0)) {
    throw new Error(`${where}: ${excerptOf(JSON.stringify(op))} is not ["s", [gap, ...], ops]`);
  }
  const gaps = op[1] as number[];
  let end = pos + gaps.length;
  for (const g of gaps) {
    end += g;
  }
  if (end > count) {
    throw new Error(`${where}: a sparse op at ${pos} reaches past the ${count} values`);
  }
  const out: number[] = [];
  let p = pos - 1;
  for (const g of gaps) {
    p += g + 1;
    out.push(p);
  }
  return out;
}

/** `decode_column`: one column's values from its ops (throws where Python raises); `copied` gets the ranges copied. */
function decodeColumn(ops: unknown, base: unknown[] | null, count: number, where: string,
  copied: Array<[number, number]> = []): unknown[] {
  if (!Array.isArray(ops)) {
    throw new Error(`${where} is not a list of ops`);
  }
  const col: unknown[] = [];
  for (const op of ops) {
    const pos = col.length;
    if (isPyInt(op)) {
      if (op < 0 || base === null || pos + op > base.length) {
        throw new Error(`${where}: a copy of ${op} value(s) at ${pos} has no previous rows to copy`);
      }
      for (let k = 0; k < op; k++) {
        const v = base[pos + k];
        if (v === NO_ROW) {
          throw new Error(`${where}: a copy at ${pos} reaches a row that has no aligned previous row`);
        }
        col.push(v);
      }
      if (copied.length && copied[copied.length - 1][1] === pos) {
        copied[copied.length - 1][1] = pos + op;
      } else if (op) {
        copied.push([pos, pos + op]);
      }
      continue;
    }
    if (!Array.isArray(op) || !op.length || typeof op[0] !== 'string') {
      throw new Error(`${where}: ${excerptOf(JSON.stringify(op) ?? String(op))} is not an op`);
    }
    const kind = op[0];
    if (kind === 'v') {
      for (let k = 1; k < op.length; k++) {
        col.push(op[k]);
      }
    } else if (kind === 'k') {
      const table = op[1];
      if (op.length === 3 && Array.isArray(table) && typeof op[2] === 'string') { // indexes as digits
        const digits = op[2];
        if (!/^[0-9]*$/.test(digits) || [...digits].some(c => Number(c) >= table.length)) {
          throw new Error(`${where}: ${excerptOf(JSON.stringify(op))} is not ["k", [value, ...], "digits"]`);
        }
        for (const c of digits) {
          col.push(table[Number(c)]);
        }
      } else if (op.length !== 3 || !Array.isArray(table) || !Array.isArray(op[2]) ||
        !op[2].every((k: unknown) => isPyInt(k) && k >= 0 && k < table.length)) {
        throw new Error(`${where}: ${excerptOf(JSON.stringify(op))} is not ["k", [value, ...], [index, ...]]`);
      } else {
        for (const k of op[2] as number[]) {
          col.push(table[k]);
        }
      }
    } else if (kind === 'q' || kind === 'qd') {
      if (op.length !== 2 || !Array.isArray(op[1]) || !op[1].every(isPyInt)) {
        throw new Error(`${where}: ${excerptOf(JSON.stringify(op))} is not ['${kind}', [int, ...]]`);
      }
      const ks = op[1] as number[];
      if (kind === 'q') {
        if (ks.some(k => k < 0)) {
          throw new Error(`${where}: a "q" op holds a negative number`);
        }
        for (const k of ks) {
          col.push(k / Q);
        }
      } else {
        if (base === null || pos + ks.length > base.length) {
          throw new Error(`${where}: a "qd" op at ${pos} has no previous values to add to`);
        }
        const vals = ks.map((d, k) => (kOf(base[pos + k], where) + d) / Q);
        if (vals.some(v => v < 0)) {
          throw new Error(`${where}: a "qd" op makes a negative number`);
        }
        col.push(...vals);
      }
    } else if (kind === 'qn') {
      if (op.length !== 2 || !Array.isArray(op[1]) || !op[1].every((e: unknown) => e === null || isPyInt(e))) {
        throw new Error(`${where}: ${excerptOf(JSON.stringify(op))} is not ["qn", [int or null, ...]]`);
      }
      const es = op[1] as Array<number | null>;
      if (base !== null && pos + es.length > base.length) {
        throw new Error(`${where}: a "qn" op at ${pos} reaches past the previous values`);
      }
      es.forEach((e, j) => {
        if (e === null) {
          col.push(null);
          return;
        }
        const b = base !== null ? base[pos + j] : null;
        const k = e + (typeof b === 'number' ? kOf(b, where, 'qn') : 0);
        if (k < 0) {
          throw new Error(`${where}: a "qn" op makes a negative number`);
        }
        col.push(k / Q);
      });
    } else if (kind === 'n') {
      if (op.length !== 3 || typeof op[1] !== 'string' || !Array.isArray(op[2]) || !/^[01]*$/.test(op[1])) {
        throw new Error(`${where}: ${excerptOf(JSON.stringify(op))} is not ["n", "0 or 1 per value", ops]`);
      }
      const mask = op[1];
      if (base !== null && pos + mask.length > base.length) {
        throw new Error(`${where}: an "n" op at ${pos} reaches past the previous values`);
      }
      const ones: number[] = [];
      for (let i = 0; i < mask.length; i++) {
        if (mask[i] === '1') {
          ones.push(pos + i);
        }
      }
      const values = decodeColumn(op[2], base === null ? null : ones.map(p => base[p]), ones.length,
        `${where}: an "n" op's values`);
      let j = 0;
      for (let i = 0; i < mask.length; i++) {
        col.push(mask[i] === '1' ? values[j++] : null);
      }
    } else if (kind === 's') {
      const positions = sparsePositions(op, pos, count, where);
      const gaps = op[1] as number[];
      if (base === null && gaps.some(g => g > 0)) {
        throw new Error(`${where}: a sparse op at ${pos} has no previous rows to copy`);
      }
      const values = decodeColumn(op[2], base === null ? null : positions.map(p => base[p]), positions.length,
        `${where}: a sparse op's values`);
      gaps.forEach((g, j) => {
        if (g) {
          const start = col.length;
          for (let k = start; k < start + g; k++) {
            if (base![k] === NO_ROW) {
              throw new Error(`${where}: a sparse op copies a row at ${start} that has no aligned previous row`);
            }
            col.push(base![k]);
          }
          if (copied.length && copied[copied.length - 1][1] === start) {
            copied[copied.length - 1][1] = start + g;
          } else {
            copied.push([start, start + g]);
          }
        }
        col.push(values[j]);
      });
    } else if (kind === 'r' || kind === 'a' || kind === 'd') {
      const want = kind === 'a' ? 4 : 3;
      if (op.length !== want || !isPyInt(op[1]) || op[1] < 0 || pos + op[1] > count) {
        throw new Error(`${where}: ${excerptOf(JSON.stringify(op))} is not a valid '${kind}' op`);
      }
      const n = op[1];
      if (kind === 'r') {
        for (let k = 0; k < n; k++) {
          col.push(op[2]);
        }
      } else if (kind === 'a') {
        if (!isPyInt(op[2]) || !isPyInt(op[3])) {
          throw new Error(`${where}: ${excerptOf(JSON.stringify(op))}: an arithmetic run needs int first and step`);
        }
        for (let k = 0; k < n; k++) {
          col.push(op[2] + op[3] * k);
        }
      } else {
        if (!isPyInt(op[2]) || base === null || pos + n > base.length) {
          throw new Error(`${where}: ${excerptOf(JSON.stringify(op))} has no previous ints to add to`);
        }
        for (let k = 0; k < n; k++) {
          const x = base[pos + k];
          if (!isPyInt(x)) {
            throw new Error(`${where}: ${excerptOf(JSON.stringify(op))} adds to previous values that are not ints`);
          }
        }
        for (let k = 0; k < n; k++) {
          col.push((base[pos + k] as number) + op[2]);
        }
      }
    } else {
      throw new Error(`${where}: unknown op '${kind}'`);
    }
    if (col.length > count) {
      break;
    }
  }
  if (col.length !== count) {
    throw new Error(`${where} resolves to ${col.length} values, expected ${count}`);
  }
  return col;
}

/**
 * `_decode_masked`: `["m", ref, ops]` — the previous values, except where the earlier column `ref` did not
 * copy; `["m", ref, ops, rest]` — and where it copied, the values `rest` decodes to.
 */
function decodeMasked(op: unknown[], base: unknown[] | null, count: number,
  plain: Map<string, Array<[number, number]>>, where: string): unknown[] {
  if ((op.length !== 3 && op.length !== 4) || typeof op[1] !== 'string' || !plain.has(op[1])) {
    throw new Error(`${where}: ${excerptOf(JSON.stringify(op))} is not ["m", an earlier column with plain ops, ops(, rest)]`);
  }
  const positions: number[] = [];
  let pos = 0;
  for (const [a, b] of plain.get(op[1])!) {
    for (let i = pos; i < a; i++) {
      positions.push(i);
    }
    pos = b;
  }
  for (let i = pos; i < count; i++) {
    positions.push(i);
  }
  if (base === null || base.length !== count) {
    throw new Error(`${where}: a masked column has no previous rows to copy`);
  }
  const sub = decodeColumn(op[2], positions.map(i => base[i]), positions.length, where);
  const col = base.slice();
  positions.forEach((i, k) => {
    col[i] = sub[k];
  });
  if (op.length === 4) {
    const rest: number[] = [];
    for (const [a, b] of plain.get(op[1])!) {
      for (let i = a; i < b; i++) {
        rest.push(i);
      }
    }
    const values = decodeColumn(op[3], rest.map(i => base[i]), rest.length, `${where}: its other positions`);
    rest.forEach((i, k) => {
      col[i] = values[k];
    });
    return col;
  }
  if (col.includes(NO_ROW)) {
    throw new Error(`${where}: a masked column copies a row that has no aligned previous row`);
  }
  return col;
}

/** `decode_rows`: `chain.rows` against the previous decision's decoded columns (null for a keyframe). */
function decodeRows(spec: Record<string, any>, prev: ChainColumns | null, where: string,
  prevKeys: string[] | null): ChainColumns {
  const keys = checkRowsSpec(spec, where, prevKeys);
  const count = spec.count as number;
  const align = ('align' in spec ? spec.align : []) as unknown[];
  let pos = 0;
  for (const seg of align) {
    if (!(Array.isArray(seg) && seg.length === 3 && seg.every(isPyInt) && seg[0] >= pos && seg[1] >= 0 &&
      seg[2] >= 0 && seg[0] + seg[1] <= count)) {
      throw new Error(`${where}: chain.rows.align has ${excerptOf(JSON.stringify(seg) ?? String(seg))}, not ` +
        '[start, length, previous start] in order');
    }
    if (prev === null || seg[2] + seg[1] > prev.count) {
      throw new Error(`${where}: chain.rows.align refers to previous rows that do not exist`);
    }
    pos = seg[0] + seg[1];
  }
  const cols = new Map<string, unknown[]>();
  const plain = new Map<string, Array<[number, number]>>();
  for (const key of keys) {
    let base: unknown[] | null = null;
    if (prev !== null && align.length) {
      const pcol = prev.cols.get(key);
      base = pcol ? alignedBase(pcol, align as number[][], count) : null;
    }
    const ops = spec.columns[key];
    const at = `${where}: column '${key}'`;
    if (Array.isArray(ops) && ops.length === 1 && Array.isArray(ops[0]) && ops[0][0] === 'm') {
      cols.set(key, decodeMasked(ops[0], base, count, plain, at));
    } else {
      const copied: Array<[number, number]> = [];
      cols.set(key, decodeColumn(ops, base, count, at, copied));
      plain.set(key, copied);
    }
  }
  return { keys, count, cols };
}

function rowsOf(c: ChainColumns): Array<Record<string, unknown>> {
  const ordered = c.keys.map(k => c.cols.get(k)!);
  const unsafe = c.keys.includes('__proto__');
  const out: Array<Record<string, unknown>> = new Array(c.count);
  for (let i = 0; i < c.count; i++) {
    const row: Record<string, unknown> = {};
    for (let j = 0; j < c.keys.length; j++) {
      if (unsafe && c.keys[j] === '__proto__') {
        Object.defineProperty(row, '__proto__', { value: ordered[j][i], enumerable: true, writable: true, configurable: true });
      } else {
        row[c.keys[j]] = ordered[j][i];
      }
    }
    out[i] = row;
  }
  return out;
}

/** The full decision of a chained `context_decision`, decoded from the nearest keyframe or cached one. */
function chainedDecision(trace: ParsedTrace, ev: TraceEvent): ContextDecision | null {
  const cache = trace.chainRows;
  const todo: TraceEvent[] = [];
  let cur: TraceEvent | null = ev;
  let base: ChainColumns | null = null;
  while (cur !== null) {
    const hit = cache.get(cur);
    if (hit) {
      base = hit;
      break;
    }
    todo.push(cur);
    cur = trace.chained.get(cur)?.prev ?? null;
  }
  let cols = base;
  for (let i = todo.length - 1; i >= 0; i--) {
    const e = todo[i];
    const link = trace.chained.get(e)!;
    try {
      cols = decodeRows(link.chain.rows, link.prev === null ? null : cols, `decision ${e.event_id}`,
        link.prev === null ? null : trace.chained.get(link.prev)?.keys ?? null);
    } catch (err) {
      for (let j = i; j >= 0; j--) {
        trace.decisionProblems.set(todo[j], String((err as Error).message));
      }
      return null;
    }
    cache.delete(e);
    cache.set(e, cols);
    if (cache.size > CHAIN_CACHE) {
      cache.delete(cache.keys().next().value!);
    }
  }
  if (cols === null) {
    return null;
  }
  cache.delete(ev); // most recently used last
  cache.set(ev, cols);
  return { ...ev.metadata.decision, decisions: rowsOf(cols) } as ContextDecision;
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

/**
 * The pins a build had: its decision's `inputs.pins` (what the builder was given: a pin made before the
 * first turn included, one unpinned after the turn's call still there), else — a trace without them —
 * the pin and unpin primitives up to the turn ({@link activePins}).
 */
export function pinsOfBuild(trace: ParsedTrace, agent: string, turn: number, step = 0): ActivePin[] {
  const info = getTurn(trace, agent, turn);
  const recorded = info?.steps.find(s => s.step === step)?.decision?.metadata?.inputs?.pins;
  if (!Array.isArray(recorded)) {
    return activePins(trace, agent, turn);
  }
  return recorded.filter(p => p && typeof p === 'object' && typeof p.pin_id === 'string').map(p => ({
    pin_id: p.pin_id,
    label: typeof p.label === 'string' ? p.label : null,
    content: typeof p.content === 'string' ? p.content : null,
    until_turn: numOrNull(p.until_turn),
    created_turn: numOrNull(p.created_turn)
  }));
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

// ---- the prompt as sent (prompt_sent events, arcana_jupyter/trace/prompt_sent.py) -------------------

/** A prompt message as the provider got it (`Message.wire()`). */
export interface WireMessage {
  role: string;
  content: string;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  name?: string;
}

/** One call's prompt as sent, as `TraceReader.prompt_sent` returns it (`SentPrompt`). */
export interface SentPrompt {
  source: 'prompt_sent' | 'snapshot';
  messages: WireMessage[];
  tokens: Array<number | null>;
  recordedDigest: string | null;
  digest: string | null;
  verified: boolean;
  /** Messages holding a secret the trace masked (such a prompt cannot verify). */
  masked: number;
  eventId: string | null;
}

interface ResolvedSent {
  messages: WireMessage[];
  tokens: Array<number | null>;
  digest: string | null;
  /** The parts of the chain's last JOIN_BASES joined messages, the last last (`joined` in Python): what a `{"J": ops}` copies. */
  joined?: Array<Array<string | number>>;
}

/** What the viewer says of an older trace's prompt (the Python's `context.rebuild.NOT_RECORDED`). */
export const PROMPT_NOT_RECORDED = 'not recorded in this trace (written before the prompt_sent event existed)';

function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

/** A recorded history message (`Message.record()`) as it was sent (`Message.wire()`). */
export function wireOfRecord(r: Record<string, any>): WireMessage {
  const out: WireMessage = { role: String(r.role), content: typeof r.content === 'string' ? r.content : '' };
  const calls = Array.isArray(r.tool_calls) ? r.tool_calls : [];
  if (calls.length) {
    out.tool_calls = calls.map((c: any) => {
      const fn = c && typeof c.function === 'object' && c.function ? c.function : c;
      const args = fn?.arguments;
      return {
        id: String(c?.id), type: 'function',
        function: { name: String(fn?.name), arguments: typeof args === 'string' ? args : args === undefined ? '{}' : canonicalJson(args) }
      };
    });
  }
  if (typeof r.tool_call_id === 'string') {
    out.tool_call_id = r.tool_call_id;
  }
  if (typeof r.name === 'string' && (out.role === 'user' || out.role === 'tool')) {
    out.name = r.name;
  }
  return out;
}

/** The lines a prompt_sent edit copies: `text + "\n"` cut after each newline (`lines_of` in Python). */
function linesOf(text: string): string[] {
  return text.split('\n').map(p => p + '\n');
}

/** What a `{"j": parts}` message puts between its parts (`JOIN_SEPARATOR` in Python). */
const JOIN_SEPARATOR = '\n\n---\n\n';

/**
 * `apply_line_edit`: the text line-edit `ops` make of `base` (`[start, n]` copies lines of `base + "\n"`
 * cut after each newline, a string is new text, the last newline is dropped). Null when the base or a
 * new text is null (`trace_content="none"`). Throws where Python raises. With `history` (a prompt_sent
 * message's `e`) two more ops read: `[k, a, text, b]` (line k with its middle changed) and `{"h": i}`
 * (the content of history message i).
 */
export function applyLineEdit(
  base: string | null, ops: unknown, where: string, history?: (h: number) => Record<string, any> | null
): string | null {
  if (!Array.isArray(ops)) {
    throw new Error(`${where}: the edit's ops are not a list`);
  }
  if (base === null || ops.some(op => op === null)) {
    return null;
  }
  const lines = linesOf(base);
  const parts: string[] = [];
  for (const op of ops) {
    if (typeof op === 'string') {
      parts.push(op);
      continue;
    }
    if (history && Array.isArray(op) && op.length === 4) {
      parts.push(lineMiddle(op, lines, where));
      continue;
    }
    if (history && isPlainObject(op)) {
      parts.push(historyText(op, history, where));
      continue;
    }
    const run = Array.isArray(op) ? refRun(op) : null;
    if (run === null || run[0] < 0 || run[0] + run[1] > lines.length) {
      throw new Error(`${where}: the edit copies lines ${JSON.stringify(op)} of a text of ${lines.length}`);
    }
    parts.push(...lines.slice(run[0], run[0] + run[1]));
  }
  const text = parts.join('');
  if (!text.endsWith('\n')) {
    throw new Error(`${where}: the edit's text does not end with its line end`);
  }
  return text.slice(0, -1);
}

/** `[k, a, text, b]` (`_line_middle` in Python): line k of the base with its middle replaced. */
function lineMiddle(op: unknown[], lines: string[], where: string): string {
  const [k, a, text, b] = op;
  if (!(isInt(k) && isInt(a) && isInt(b) && typeof text === 'string' && k >= 0 && k < lines.length && a >= 0 && b >= 0 &&
        a + b <= lines[k].length - 1 && !/[\uD800-\uDFFF]/.test(lines[k]))) {
    throw new Error(`${where}: the edit's line change ${(JSON.stringify(op) ?? '').slice(0, 80)} does not apply to a text of ${lines.length} line(s)`);
  }
  const line = lines[k].slice(0, -1);
  return line.slice(0, a) + text + line.slice(line.length - b) + '\n';
}

/** `{"h": i}` (`_history_text` in Python): the content of history message i as the trace records it. */
function historyText(op: Record<string, unknown>, history: (h: number) => Record<string, any> | null, where: string): string {
  const h = op.h;
  const rec = isInt(h) && h >= 0 && Object.keys(op).length === 1 ? history(h) : null;
  if (rec === null) {
    throw new Error(`${where}: the edit's ${(JSON.stringify(op) ?? '').slice(0, 40)} is not a recorded history message`);
  }
  const content = wireOfRecord(rec).content;
  return typeof content === 'string' ? content : '';
}

/**
 * A `{"j": parts}` message's parts (history references `i` / `[i, n]` and texts, as traces before `J`
 * hold them) as join parts: texts, and history messages as gaps (`_absolute_parts` in Python).
 */
function absoluteParts(parts: unknown, where: string): Array<string | number> {
  if (!Array.isArray(parts) || parts.length === 0) {
    throw new Error(`${where}: the joined message ${(JSON.stringify(parts) ?? '').slice(0, 80)} is not a list of parts`);
  }
  const out: Array<string | number> = [];
  let end = 0;
  for (const part of parts) {
    if (typeof part === 'string') {
      out.push(part);
      continue;
    }
    const ref = refRun(part);
    if (ref === null || ref[0] < 0 || ref[1] > 1_000_000) {
      throw new Error(`${where}: the joined message's part ${(JSON.stringify(part) ?? '').slice(0, 40)} is not text, i or [i, n]`);
    }
    for (let h = ref[0]; h < ref[0] + ref[1]; h++) {
      out.push(h - end);
      end = h + 1;
    }
  }
  return out;
}

/** How many joined messages a `{"J": ops, "b": back}` may copy from (`JOIN_BASES` in Python). */
const JOIN_BASES = 4;

/**
 * A `{"J": ops, "b": back}` message's parts (`_copied_parts` in Python): `[k, n]` copies parts of its
 * base, the joined message `back` (0 when left out) before the last of `bases`.
 */
function copiedParts(item: Record<string, any>, bases: Array<Array<string | number>>, where: string): Array<string | number> {
  const ops: unknown = item.J;
  const back: unknown = 'b' in item ? item.b : 0;
  if (!isInt(back) || back < 0 || (back > 0 && back >= bases.length)) {
    throw new Error(`${where}: the joined message's base ${String(back).slice(0, 20)} is not one of the last ${bases.length} joined message(s)`);
  }
  const base = bases.length ? bases[bases.length - 1 - back] : [];
  if (!Array.isArray(ops) || ops.length === 0) {
    throw new Error(`${where}: the joined message ${(JSON.stringify(ops) ?? '').slice(0, 80)} is not a list of parts`);
  }
  const out: Array<string | number> = [];
  for (const op of ops) {
    if (typeof op === 'string' || isInt(op)) {
      out.push(op);
      continue;
    }
    const ref = Array.isArray(op) ? refRun(op) : null;
    if (ref === null || ref[0] < 0 || ref[0] + ref[1] > base.length) {
      throw new Error(`${where}: the joined message's part ${(JSON.stringify(op) ?? '').slice(0, 40)} is not text, a gap or [k, n] of the last joined message's ${base.length} part(s)`);
    }
    out.push(...base.slice(ref[0], ref[0] + ref[1]));
  }
  return out;
}

/** A joined message from its parts (`_joined_message` in Python): texts and history messages (as gaps) joined. */
function joinedMessage(parts: Array<string | number>, history: (h: number) => Record<string, any> | null, where: string): WireMessage {
  const texts: string[] = [];
  let first: WireMessage | null = null;
  let end = 0;
  for (const part of parts) {
    if (typeof part === 'string') {
      texts.push(part);
      continue;
    }
    const h = end + part;
    const rec = h >= 0 ? history(h) : null;
    if (rec === null) {
      throw new Error(`${where} joins history message ${h}, which is not recorded`);
    }
    end = h + 1;
    const wire = wireOfRecord(rec);
    first = first ?? wire;
    texts.push(typeof wire.content === 'string' ? wire.content : '');
  }
  if (first === null) {
    throw new Error(`${where}: the joined message refers to no history message`);
  }
  return { ...first, content: texts.join(JOIN_SEPARATOR) };
}

/** A reference's `i` or `[i, n]` as [start, length]; null when it is neither. */
function refRun(v: unknown): [number, number] | null {
  if (isInt(v)) {
    return [v, 1];
  }
  if (Array.isArray(v) && v.length === 2 && isInt(v[0]) && isInt(v[1]) && v[1] >= 1) {
    return [v[0], v[1]];
  }
  return null;
}

/** One prompt_sent record resolved against the previous prompt (null: a keyframe) and the history. */
export function resolvePromptSent(
  meta: Record<string, any>,
  previous: ResolvedSent | null,
  history: (h: number) => Record<string, any> | null
): ResolvedSent {
  const keep = meta.keep ?? 0;
  if (!isInt(keep) || keep < 0) {
    throw new Error(`keep must be a non-negative integer, not ${JSON.stringify(keep)}`);
  }
  if (meta.prev !== null && meta.prev !== undefined && previous === null) {
    throw new Error(`the previous prompt ${meta.prev} is not in the trace`);
  }
  const prevMsgs = previous ? previous.messages : [];
  const prevTokens: Array<number | null> = previous ? previous.tokens.slice() : [];
  while (prevTokens.length < prevMsgs.length) {
    prevTokens.push(null);
  }
  if (keep > prevMsgs.length) {
    throw new Error(`keep ${keep} but the previous prompt has ${prevMsgs.length} message(s)`);
  }
  const rest = meta.messages;
  if (!Array.isArray(rest)) {
    throw new Error('messages is not a list');
  }
  const messages = prevMsgs.slice(0, keep);
  const tokens: Array<number | null> = prevTokens.slice(0, keep);
  let joined: Array<Array<string | number>> = previous && meta.prev !== null && meta.prev !== undefined ? previous.joined ?? [] : [];
  const own: number[] = [];
  for (const item of rest) {
    const at = messages.length;
    if (!isPlainObject(item)) {
      throw new Error(`message ${at} is not an object`);
    }
    if ('role' in item) {
      own.push(at);
      messages.push({ ...(item as any) });
      tokens.push(null);
    } else if ('h' in item) {
      const ref = refRun(item.h);
      if (ref === null) {
        throw new Error(`message ${at}: the history reference ${JSON.stringify(item.h)} is not i or [i, n]`);
      }
      for (let h = ref[0]; h < ref[0] + ref[1]; h++) {
        const rec = history(h);
        if (rec === null) {
          throw new Error(`message ${messages.length} refers to history message ${h}, which is not recorded`);
        }
        own.push(messages.length);
        messages.push(wireOfRecord(rec));
        tokens.push(null);
      }
    } else if ('e' in item) {
      const edit = item.e;
      if (!Array.isArray(edit) || edit.length !== 2 || !isInt(edit[0]) || edit[0] < 0 || edit[0] >= prevMsgs.length || !Array.isArray(edit[1])) {
        throw new Error(`message ${at}: the edit ${JSON.stringify(edit).slice(0, 80)} is not [index in the previous prompt, ops]`);
      }
      const base = prevMsgs[edit[0]];
      const text = applyLineEdit(typeof base.content === 'string' ? base.content : '', edit[1], `message ${at}`, history);
      if (text === null) {
        throw new Error(`message ${at}: the edit holds a null text`);
      }
      own.push(at);
      messages.push({ ...base, content: text });
      tokens.push(null);
    } else if ('j' in item || 'J' in item) {
      const where = `message ${at}`;
      const parts = 'j' in item ? absoluteParts(item.j, where) : copiedParts(item, joined, where);
      joined = [...joined, parts].slice(-JOIN_BASES);
      own.push(at);
      messages.push(joinedMessage(parts, history, where));
      tokens.push(null);
    } else if ('p' in item) {
      const ref = refRun(item.p);
      if (ref === null || ref[0] < 0 || ref[0] + ref[1] > prevMsgs.length) {
        throw new Error(`message ${at} refers to messages ${JSON.stringify(item.p)} of the previous prompt, which has ${prevMsgs.length}`);
      }
      for (let k = ref[0]; k < ref[0] + ref[1]; k++) {
        messages.push({ ...prevMsgs[k] });
        tokens.push(prevTokens[k]);
      }
    } else {
      throw new Error(`message ${at} is neither a message nor a reference`);
    }
  }
  const toks = meta.tokens;
  if (Array.isArray(toks) && toks.length === own.length) {
    own.forEach((position, k) => {
      tokens[position] = isInt(toks[k]) ? toks[k] : null;
    });
  }
  const out: ResolvedSent = { messages, tokens, digest: typeof meta.digest === 'string' ? meta.digest : null };
  if (joined.length) {
    out.joined = joined;
  }
  return out;
}

interface SentCache {
  byId: Map<string, TraceEvent>;
  /** Each agent's system prompt from its first run_start (history index 0 when not recorded). */
  system: Map<string, unknown>;
  resolved: Map<string, ResolvedSent | string>;
}

const sentCaches = new WeakMap<ParsedTrace, SentCache>();

function sentCache(trace: ParsedTrace): SentCache {
  let c = sentCaches.get(trace);
  if (!c) {
    const byId = new Map<string, TraceEvent>();
    const system = new Map<string, unknown>();
    for (const ev of trace.events) {
      if (ev.event_type === 'prompt_sent' && typeof ev.event_id === 'string' && !byId.has(ev.event_id)) {
        byId.set(ev.event_id, ev);
      } else if (ev.event_type === 'run_start' && !system.has(ev.agent)) {
        system.set(ev.agent, ev.metadata?.system_prompt);
      }
    }
    c = { byId, system, resolved: new Map() };
    sentCaches.set(trace, c);
  }
  return c;
}

/** The resolved prompt of one prompt_sent event (its chain walked back), or why it cannot be read. */
function resolveSentEvent(trace: ParsedTrace, ev: TraceEvent): ResolvedSent | string {
  const cache = sentCache(trace);
  const chain: TraceEvent[] = [];
  let base: ResolvedSent | null = null;
  let cur: TraceEvent | undefined = ev;
  while (cur) {
    const id = String(cur.event_id);
    const hit = cache.resolved.get(id);
    if (hit !== undefined) {
      if (typeof hit === 'string') {
        return hit;
      }
      base = hit;
      break;
    }
    chain.push(cur);
    const prev: unknown = cur.metadata?.prev;
    if (typeof prev !== 'string') {
      break;
    }
    const next = cache.byId.get(prev);
    if (!next) {
      const why = `prompt_sent ${id}: the prompt ${prev} it continues is not in the trace`;
      cache.resolved.set(String(ev.event_id), why);
      return why;
    }
    cur = next;
  }
  const agent = ev.agent;
  const records = trace.history.get(agent);
  const system = cache.system.get(agent);
  const history = (h: number): Record<string, any> | null => {
    const r = records?.get(h);
    if (r) {
      return r as Record<string, any>;
    }
    return h === 0 && typeof system === 'string' ? { role: 'system', content: system } : null;
  };
  for (let i = chain.length - 1; i >= 0; i--) {
    const id = String(chain[i].event_id);
    try {
      base = resolvePromptSent(chain[i].metadata ?? {}, base, history);
    } catch (err) {
      const why = `prompt_sent ${id} cannot be resolved (${(err as Error).message})`;
      cache.resolved.set(String(ev.event_id), why);
      return why;
    }
    cache.resolved.set(id, base);
  }
  return base!;
}

function toolWire(t: any): unknown {
  return {
    type: 'function',
    function: {
      name: t?.name,
      description: typeof t?.description === 'string' ? t.description : '',
      parameters: t?.parameters ?? { type: 'object', properties: {} }
    }
  };
}

/** `request_digest` of wire messages, the recorded tool specs and the model (16 hex). */
export function promptDigest(messages: unknown[], tools: unknown[], model: string): string {
  return sha256Hex(canonicalJson({ messages, model, tools: tools.map(toolWire) })).slice(0, 16);
}

/**
 * The prompt of (turn, step) as the provider was given it — from its prompt_sent event, else its
 * prompt_snapshot — marked verified when its request digest, recomputed, equals the call's recorded
 * one. `null`: the trace holds neither (an older trace: say PROMPT_NOT_RECORDED); a string: why the
 * recorded prompt cannot be read.
 */
export function sentPromptOf(trace: ParsedTrace, agent: string, turn: number, step = 0): SentPrompt | string | null {
  const info = getTurn(trace, agent, turn);
  const s = info?.steps.find(x => x.step === step);
  if (!info || !s) {
    return null;
  }
  const decisionMd = s.decision?.metadata ?? {};
  let messages: WireMessage[];
  let tokens: Array<number | null>;
  let source: SentPrompt['source'];
  let sentDigest: string | null = null;
  const sentEv = s.sent;
  if (sentEv) {
    const r = resolveSentEvent(trace, sentEv);
    if (typeof r === 'string') {
      return r;
    }
    messages = r.messages;
    tokens = r.tokens;
    sentDigest = r.digest;
    source = 'prompt_sent';
  } else {
    const snap = s.snapshot?.metadata?.messages;
    if (!Array.isArray(snap) || !snap.length) {
      return null;
    }
    messages = snap as WireMessage[];
    tokens = snap.map(() => null);
    source = 'snapshot';
  }
  const callDigest = s.llmCall?.metadata?.request_digest;
  const recorded = typeof callDigest === 'string' ? callDigest
    : typeof decisionMd.request_digest === 'string' ? decisionMd.request_digest : sentDigest;
  // A standalone prompt (the summariser's, step -1: no decision) names the model its digest is made with.
  const model = String(decisionMd.builder?.model ?? s.snapshot?.metadata?.model ?? sentEv?.metadata?.model ?? '');
  const tools = Array.isArray(decisionMd.tools) ? decisionMd.tools : [];
  let digest: string | null = null;
  try {
    digest = promptDigest(messages, tools, model);
  } catch {
    digest = null;
  }
  const masked = messages.filter(m => canonicalJson(m).includes('[REDACTED]')).length;
  return {
    source, messages, tokens, recordedDigest: recorded, digest,
    verified: recorded !== null && digest === recorded, masked,
    eventId: sentEv && typeof sentEv.event_id === 'string' ? sentEv.event_id : null
  };
}

/** One line: where the prompt comes from and whether it verified (`SentPrompt.status()` in Python). */
export function sentStatus(p: SentPrompt): string {
  const where = p.source === 'prompt_sent' ? 'recorded as sent' : 'from the prompt snapshot';
  if (p.verified) {
    return `${where}; verified (digest ${p.recordedDigest})`;
  }
  if (p.masked) {
    return `${where}; not verified: ${p.masked} message(s) hold secrets the trace masked (digest ${p.digest} vs ${p.recordedDigest} recorded)`;
  }
  if (p.recordedDigest === null) {
    return `${where}; no request digest recorded to verify against`;
  }
  return `${where}; NOT verified (digest ${p.digest} vs ${p.recordedDigest} recorded)`;
}
