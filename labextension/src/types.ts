/**
 * The data contract with the Python side, in one file.
 *
 * The decision models mirror arcana_jupyter/context/decisions.py field for field
 * (tests/labextension/test_types_sync.py checks the names); the turn bundle follows
 * docs/TURN_BUNDLE.md and the trace envelope docs/TRACE_FORMAT.md.
 * Every string in these objects is model or user text: render it as text, never as HTML.
 */

export const TURN_MIME_TYPE = 'application/vnd.arcana.turn+json';

export type Role = 'system' | 'user' | 'assistant' | 'tool';
export type Outcome = 'kept' | 'compressed' | 'dropped' | 'summarized';
export type Fidelity = 'L0' | 'L1' | 'L2' | 'L3';
export type Layer = 'identity' | 'task' | 'working' | 'external';
export type Source = 'history' | 'input' | 'pin' | 'section';
export type Placement = 'head' | 'late';

export const OUTCOMES: Outcome[] = ['kept', 'compressed', 'summarized', 'dropped'];
export const LAYERS: Layer[] = ['identity', 'task', 'working', 'external'];

// ---- arcana_jupyter/context/decisions.py ------------------------------------------------

/** @pydantic TokenBudget */
export interface TokenBudget {
  total_window: number;
  response_reserve: number;
}

/** @pydantic MessageDecision: what happened to one input message, and why. */
export interface MessageDecision {
  index: number;
  role: Role;
  outcome: Outcome;
  fidelity: Fidelity | null;
  relevance_score?: number | null;
  token_count_before: number;
  token_count_after: number;
  reason: string;
  layer?: Layer;
  source?: Source;
  /** Section name for source "section", pin id for pins. */
  section?: string | null;
  pinned?: boolean;
  turn?: number | null;
  /** Index of the message in the prompt that was sent; null when dropped or summarised. */
  position?: number | null;
  /** Brought back late in the prompt, in the block of earlier turns relevant to the input. */
  recalled?: boolean;
  /** For a recalled message whose compressed form also stays in its in-order slot: that slot. */
  anchor_position?: number | null;
}

/** @pydantic LayerReport */
export interface LayerReport {
  layer: Layer;
  messages: number;
  tokens_before: number;
  tokens_after: number;
}

/** @pydantic ContextReport: token accounting of one build, per layer and in total. */
export interface ContextReport {
  layers: LayerReport[];
  total_before: number;
  total_after: number;
  tools_tokens?: number;
  summary_tokens?: number;
  prefix_tokens_reused?: number | null;
  prefix_messages_reused?: number | null;
}

/** @pydantic BudgetSnapshot */
export interface BudgetSnapshot {
  total_window: number;
  response_reserve: number;
  available: number;
  used: number;
  remaining: number;
  utilization: number;
  overflow?: boolean;
}

/** @pydantic ContextDecision: the composition decision of one build. */
export interface ContextDecision {
  turn?: number | null;
  step?: number;
  strategy: string;
  requested_strategy: string;
  utilization_before: number;
  decisions: MessageDecision[];
  overflow?: boolean;
  notes?: string[];
  summary?: string | null;
}

// ---- messages ------------------------------------------------------------------------------

/** A message in Message.record() or wire form. */
export interface MessageRecord {
  role: Role | string;
  content: string | null;
  tool_calls?: Array<{
    id?: string;
    name?: string;
    arguments?: string;
    function?: { name?: string; arguments?: string };
  }>;
  tool_call_id?: string | null;
  name?: string | null;
  turn?: number | null;
}

// ---- the turn bundle (docs/TURN_BUNDLE.md) -------------------------------------------------

export interface TurnStep {
  step: number;
  decision?: ContextDecision | null;
  report?: ContextReport | null;
  budget?: BudgetSnapshot | null;
  request_digest?: string | null;
  messages?: MessageRecord[] | null;
  /** How the prompt was counted: tokenizer, calibration ratio, our count and the provider's. */
  counting?: StepCounting | null;
}

export interface StepCounting {
  encoding: string | null;
  ratio: number | null;
  counted: number | null;
  reported: number | null;
}

export interface BundleToolCall {
  name: string;
  arguments: unknown;
  ok: boolean;
  result: unknown;
  intercepted?: boolean;
}

export interface PrimitiveCall {
  primitive: string;
  args: Record<string, unknown>;
  result: unknown;
}

export interface Pin {
  pin_id: string;
  label?: string | null;
  content?: string | null;
  tokens?: number | null;
  until_turn?: number | null;
  created_turn?: number | null;
  unpinned_turn?: number | null;
  /* Only on a pin read from a trace (the event that made it); the bundle's pins never carry it. */
  event_id?: string | null;
}

export type Tier = 'active' | 'soft' | 'hard';

export interface StateObject {
  id: string;
  kind: string;
  summary: string;
  payload?: unknown;
  tier: Tier | string;
  created_turn?: number | null;
  last_touched_turn?: number | null;
  focused?: boolean;
  retracted?: boolean;
  retracted_turn?: number | null;
  retract_reason?: string | null;
  status?: string | null;
  rationale?: string | null;
}

export interface Memory {
  id: string;
  kind: string;
  content: string | null;
  score?: number | null;
  scope?: string | string[] | null;
}

export interface TurnUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cached_input_tokens?: number | null;
}

export interface TurnError {
  type: string;
  message: string;
  where?: string | null;
}

export type TurnStatus = 'running' | 'ok' | 'error' | 'cancelled';

export interface TurnBundle {
  version: number;
  run_id: string;
  agent: string;
  turn: number;
  trace_path?: string | null;
  model?: string | null;
  status: TurnStatus | string;
  input?: string | null;
  reply?: string | null;
  steps: TurnStep[];
  tool_calls?: BundleToolCall[];
  primitives?: PrimitiveCall[];
  pins?: Pin[];
  tiers?: Partial<Record<Tier, StateObject[]>>;
  memories?: Memory[];
  usage?: TurnUsage | null;
  cost_usd?: number | null;
  latency_ms?: number | null;
  errors?: TurnError[];
  /** Adaptive-context events of the turn: state_change and context_action metadata. */
  state_changes?: Array<Record<string, any>>;
  /** The notebook's copy: prompt texts the trace holds are left out (docs/TURN_BUNDLE.md). */
  compact?: boolean;
  /** Tokens and cost of the session so far, this turn included. */
  session?: SessionUsage | null;
  /** While the turn runs: what it is doing. */
  progress?: string | null;
}

export interface SessionUsage {
  turns?: number;
  input_tokens?: number;
  output_tokens?: number;
  cached_input_tokens?: number;
  cost_usd?: number;
}

export const REPLAY_MIME_TYPE = 'application/vnd.arcana.replay+json';

/** `%arcana_replay`: where the run's trace is, and one line per turn. */
export interface ReplayBundle {
  version: number;
  run_id: string;
  agent?: string | null;
  trace_path: string;
  selected_turn?: number | null;
  turns: Array<{
    turn: number;
    status?: string | null;
    input?: string | null;
    reply?: string | null;
    usage?: TurnUsage | null;
    cost_usd?: number | null;
    strategy?: string | null;
    prompt_tokens?: number | null;
    digest_verified?: boolean | null;
  }>;
  totals?: SessionUsage | null;
}

// ---- the trace (docs/TRACE_FORMAT.md) ------------------------------------------------------

/** @pydantic TraceEvent: one line of a trace file. */
export interface TraceEvent {
  v: number;
  event_id: string;
  run_id: string;
  agent: string;
  turn: number | null;
  ts: string;
  event_type: string;
  parent_id: string | null;
  metadata: Record<string, any>;
}
