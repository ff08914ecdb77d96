/**
 * Where the views get a run's trace: resolved in Python, rendered here.
 *
 * The extension reads no trace file and knows nothing of its grammar (chained decisions, deltas,
 * prompt_sent records). It asks for the run's overview, one turn, or two turns compared
 * (`TraceRequest`, ./schema.gen), and Python answers with the typed views of
 * `arcana_jupyter/schema/trace_view.py`: the Jupyter server extension (`GET /arcana/trace`, no kernel
 * needed: ./hub), or the kernel over the widget's messages (./widget). `TraceSource` is the one client
 * of both: it keeps the last turns it was sent for the file version they were read from.
 *
 * Pure logic, no DOM and no JupyterLab imports: the unit tests run it under plain node.
 */

import type { RunView, TraceReply, TraceRequest, TurnDiffView, TurnView } from './schema.gen';

/** One question about one run's trace (the transport adds `type`, the file or run, and the request id). */
export type TraceQuery = Pick<TraceRequest, 'what' | 'agent' | 'turn' | 'a' | 'b'>;

/** Sends a question; resolves with Python's answer (`ok` or not), rejects when no answer came. */
export type Ask = (query: TraceQuery) => Promise<TraceReply>;

/** What the viewer says when a call's prompt was not recorded (an older trace). */
export const PROMPT_NOT_RECORDED = 'not recorded in this trace (written before the prompt_sent event existed)';

/** How many turns a source keeps (the viewer needs the selected one and a diff's two). */
const KEPT = 8;

/** The answer's message, or why there is none. */
function failure(reply: TraceReply | null | undefined): Error {
  return new Error(String(reply?.message ?? 'no answer'));
}

export class TraceSource {
  private version: string | null = null;
  private readonly turns = new Map<string, Promise<TurnView>>();

  constructor(private readonly ask: Ask) {}

  /** The file version the last answer was read from (a Refresh that finds another drops the kept turns). */
  get currentVersion(): string | null {
    return this.version;
  }

  private seen(reply: TraceReply): void {
    const v = reply.version ?? null;
    if (v !== null && v !== this.version) {
      if (this.version !== null) {
        this.turns.clear();
      }
      this.version = v;
    }
  }

  /** The run's overview (read again each time: a Refresh, the sidebar's look every few seconds). */
  async run(): Promise<RunView> {
    const reply = await this.ask({ what: 'run' });
    if (!reply.ok || !reply.run) {
      throw failure(reply);
    }
    this.seen(reply);
    return reply.run;
  }

  /** One turn of one agent (kept for the file version it was read from). */
  turn(agent: string, turn: number): Promise<TurnView> {
    const key = `${agent}\u0000${turn}`;
    let got = this.turns.get(key);
    if (got) {
      this.turns.delete(key); // most recently used last
    } else {
      got = this.ask({ what: 'turn', agent, turn }).then(reply => {
        if (!reply.ok || !reply.turn_view) {
          throw failure(reply);
        }
        this.seen(reply);
        return reply.turn_view;
      });
      got.catch(() => this.turns.delete(key)); // a failure is asked again next time
      if (this.turns.size >= KEPT) {
        this.turns.delete(this.turns.keys().next().value!);
      }
    }
    this.turns.set(key, got);
    return got;
  }

  /** The first builds of two turns compared. */
  async diff(agent: string, a: number, b: number): Promise<TurnDiffView> {
    const reply = await this.ask({ what: 'diff', agent, a, b });
    if (!reply.ok || !reply.diff) {
      throw failure(reply);
    }
    this.seen(reply);
    return reply.diff;
  }
}

/** The step of a turn with this number (undefined when the turn has none). */
export function stepOf(view: TurnView | null | undefined, step: number): NonNullable<TurnView['steps']>[number] | undefined {
  return view?.steps?.find(s => s.step === step);
}
