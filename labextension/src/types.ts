/**
 * The data contract with the Python side, in one file.
 *
 * The types with a pydantic model are generated from its JSON schema into ./schema.gen.ts
 * (`python scripts/gen_ts_types.py`; tests/labextension/test_ts_schema_gen.py checks it is current)
 * and re-exported here. Hand-written below is only what has no Python model (a message's wire form,
 * a pin's summary, a memory hit, the replay bundle, the turn statuses), and the few fields a model types loosely as
 * `dict[str, Any]` that the frontend reads with a known shape (each says which model and field).
 * The turn bundle is described in docs/TURN_BUNDLE.md, the trace envelope in docs/TRACE_FORMAT.md.
 * Every string in these objects is model or user text: render it as text, never as HTML.
 */

import type * as gen from './schema.gen';

export type {
  BudgetSnapshot,
  BundleToolCall,
  ContextDecision,
  ContextReport,
  Fidelity,
  Layer,
  LayerReport,
  MessageDecision,
  Outcome,
  Placement,
  PrimitiveCall,
  Role,
  SessionUsage,
  Source,
  StandingItem,
  StateObject,
  StepCounting,
  Tier,
  TokenBudget,
  TurnError
} from './schema.gen';
import type { ContextDecision, Layer, Outcome, Role, SessionUsage, StateObject, Tier } from './schema.gen';

/** `Omit` that only takes keys the model has: a field renamed in Python fails to compile here. */
type Without<T, K extends keyof T> = Omit<T, K>;

export const TURN_MIME_TYPE = 'application/vnd.arcana.turn+json';

/** The values TurnBundle.status takes (the model types it `str`). */
export type TurnStatus = 'running' | 'ok' | 'error' | 'cancelled';

/** Display order (the Literal's order is the model's). */
export const OUTCOMES: Outcome[] = ['kept', 'compressed', 'summarized', 'dropped'];
export const LAYERS: Layer[] = ['identity', 'task', 'working', 'external'];

// ---- messages ------------------------------------------------------------------------------

/**
 * A message in Message.record() or wire form (the MessageRecord model, its `tool_calls` given their
 * shape; `content` is null in a trace that keeps no text).
 */
export interface MessageRecord extends Without<gen.MessageRecord, 'role' | 'content' | 'tool_calls'> {
  role: Role | string;
  content: string | null;
  tool_calls?: Array<{
    id?: string;
    name?: string;
    arguments?: string;
    function?: { name?: string; arguments?: string };
  }>;
}

// ---- the turn bundle (docs/TURN_BUNDLE.md) -------------------------------------------------

/** The bundle's `usage`: the `UsageRecord` model. */
export type TurnUsage = gen.UsageRecord;

/** The TurnStep model, with `decision` and `messages` (typed `dict[str, Any]` in Python) given their shape. */
export interface TurnStep extends Without<gen.TurnStep, 'decision' | 'messages'> {
  /** A ContextDecision dump (the compact copy leaves out its rows' empty fields). */
  decision?: ContextDecision | null;
  messages?: MessageRecord[] | null;
}

/** A pin in the bundle: `Pin.summary()` (no Python model; the pin without its sha256). */
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

/** A memory hit in the bundle (no Python model). */
export interface Memory {
  id: string;
  kind: string;
  content: string | null;
  score?: number | null;
  scope?: string | string[] | null;
  /** `digest`: in the prompt's memory digest (from the decision's inputs); `recalled`: a recall_memory hit. */
  via?: 'digest' | 'recalled' | null;
}

/**
 * The TurnBundle model, with its `dict[str, Any]` parts given their shape: `steps` (above), `pins`,
 * `tiers` (StateObject dumps by tier), `memories` and `state_changes` (event metadata, read loosely).
 */
export interface TurnBundle extends Without<gen.TurnBundle, 'steps' | 'pins' | 'tiers' | 'memories' | 'state_changes'> {
  steps?: TurnStep[];
  pins?: Pin[];
  tiers?: Partial<Record<Tier, StateObject[]>>;
  memories?: Memory[];
  /** Adaptive-context events of the turn: state_change and context_action metadata. */
  state_changes?: Array<Record<string, any>>;
}

export const REPLAY_MIME_TYPE = 'application/vnd.arcana.replay+json';

/** `%arcana_replay` (no Python model): where the run's trace is, and one line per turn. */
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

// ---- the trace as the viewer gets it: resolved in Python (./source, arcana_jupyter/schema/trace_view.py) ----

export type {
  DiffRowView,
  ErrorView,
  PinView,
  RunView,
  SentView,
  StepView,
  TraceProblem,
  TraceReply,
  TurnDiffView,
  TurnView
} from './schema.gen';
