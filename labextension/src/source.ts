/**
 * Where the views get a run's trace: resolved in Python, rendered here.
 *
 * The extension reads no trace file and knows nothing of its grammar (chained decisions, deltas,
 * prompt_sent records). It asks for the run's overview, one turn, two turns compared, or several
 * turns and pairs at once (`TraceRequest`, ./schema.gen), and Python answers with the typed views of
 * `arcana_jupyter/schema/trace_view.py`: the Jupyter server extension (`GET /arcana/trace`, no kernel
 * needed: ./hub), or the kernel over the widget's messages (./widget). `TraceSource` is the one client
 * of both: it keeps the last turns and diffs it was sent for the file version they were read from, reads
 * ahead when asked (`readAhead`: one `turns` request for what is not kept yet), and stops asking for what
 * nobody waits for any more (an `AbortSignal`).
 *
 * Pure logic, no DOM and no JupyterLab imports: the unit tests run it under plain node.
 */

import type { RunView, TraceReply, TraceRequest, TurnDiffView, TurnView } from './schema.gen';

/** One question about one run's trace (the transport adds `type`, the file or run, and the request id). */
export type TraceQuery = Pick<TraceRequest, 'what' | 'agent' | 'turn' | 'a' | 'b' | 'turns' | 'pairs'>;

/**
 * Sends a question; resolves with Python's answer (`ok` or not), rejects when no answer came. When
 * `signal` aborts, the transport may drop the question (the server then does not read it).
 */
export type Ask = (query: TraceQuery, signal?: AbortSignal) => Promise<TraceReply>;

/** What the viewer says when a call's prompt was not recorded (an older trace). */
export const PROMPT_NOT_RECORDED = 'not recorded in this trace (written before the prompt_sent event existed)';

/** How many turns, and how many diffs, a source keeps (the viewer's read-ahead and the turns behind it). */
export const KEPT = 64;

/** The most turns (and pairs) one read-ahead asks for (the server's `MAX_BATCH`). */
export const MAX_BATCH = 32;

/** The answer's message, or why there is none. */
function failure(reply: TraceReply | null | undefined): Error {
  return new Error(String(reply?.message ?? 'no answer'));
}

/** One kept answer: asked (pending) or there. */
interface Entry<T> {
  promise: Promise<T>;
  /** The answer once it came (drawn at once, without waiting for a promise). */
  value?: T;
  /** Stops the question while nobody else asked for it. */
  controller?: AbortController;
  /** Someone other than the asker waits for it (it is not stopped when the asker stops waiting). */
  shared: boolean;
}

/** Turns and diffs kept, least recently used first. */
class Kept<T> {
  private readonly map = new Map<string, Entry<T>>();
  constructor(private readonly size: number) {}
  get(key: string): Entry<T> | undefined {
    const e = this.map.get(key);
    if (e) {
      this.map.delete(key); // most recently used last
      this.map.set(key, e);
    }
    return e;
  }
  has(key: string): boolean {
    return this.map.has(key);
  }
  value(key: string): T | undefined {
    return this.map.get(key)?.value;
  }
  set(key: string, e: Entry<T>): void {
    this.map.delete(key);
    this.map.set(key, e);
    while (this.map.size > this.size) {
      this.map.delete(this.map.keys().next().value!);
    }
  }
  drop(key: string, e: Entry<T>): void {
    if (this.map.get(key) === e) {
      this.map.delete(key);
    }
  }
  clear(): void {
    this.map.clear();
  }
}

const turnKey = (agent: string, turn: number) => `${agent}\u0000${turn}`;
const diffKey = (agent: string, a: number, b: number) => `${agent}\u0000${a}\u0000${b}`;

/** Whether a question failed because its asker stopped waiting (an aborted request). */
export function isAbort(err: unknown): boolean {
  return (err as Error)?.name === 'AbortError';
}

export class TraceSource {
  private version: string | null = null;
  private readonly turns = new Kept<TurnView>(KEPT);
  private readonly diffs = new Kept<TurnDiffView>(KEPT);
  /** Questions asked (tests and the benchmark read it). */
  asked = 0;

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
        this.diffs.clear();
      }
      this.version = v;
    }
  }

  private send(query: TraceQuery, signal?: AbortSignal): Promise<TraceReply> {
    this.asked++;
    return this.ask(query, signal);
  }

  /**
   * The run's overview (read again each time: a Refresh, the sidebar's look every few seconds). With
   * `first`, the view of that turn comes in the same answer (`turn: -1`: the agent's last; `agent`
   * omitted: the one Python shows first) and is kept, so the viewer draws its first turn from one answer.
   */
  async run(first?: { agent?: string | null; turn: number }): Promise<RunView> {
    const query: TraceQuery = { what: 'run' };
    if (first) {
      query.turn = first.turn;
      if (first.agent) {
        query.agent = first.agent;
      }
    }
    const reply = await this.send(query);
    if (!reply.ok || !reply.run) {
      throw failure(reply);
    }
    this.seen(reply);
    if (reply.turn_view) {
      this.keepTurn(reply.turn_view);
    }
    return reply.run;
  }

  private keepTurn(view: TurnView): void {
    this.turns.set(turnKey(view.agent, view.turn), { promise: Promise.resolve(view), value: view, shared: false });
  }

  /** The turn, when it was sent already (drawn without waiting). */
  turnNow(agent: string, turn: number): TurnView | undefined {
    return this.turns.value(turnKey(agent, turn));
  }

  /** The diff, when it was sent already. */
  diffNow(agent: string, a: number, b: number): TurnDiffView | undefined {
    return this.diffs.value(diffKey(agent, a, b));
  }

  /** Whether the turn is kept or asked for already. */
  hasTurn(agent: string, turn: number): boolean {
    return this.turns.has(turnKey(agent, turn));
  }

  /** Whether the diff is kept or asked for already. */
  hasDiff(agent: string, a: number, b: number): boolean {
    return this.diffs.has(diffKey(agent, a, b));
  }

  /**
   * One answer kept by `key`: the kept one, or a new question. When `signal` aborts before the answer
   * came and nobody else asked for it, the question is stopped and forgotten (the promise rejects with
   * an AbortError).
   */
  private one<T>(kept: Kept<T>, key: string, query: TraceQuery, pick: (r: TraceReply) => T | null | undefined,
    signal?: AbortSignal): Promise<T> {
    const got = kept.get(key);
    if (got) {
      if (got.value === undefined) {
        got.shared = true;
      }
      return got.promise;
    }
    const controller = new AbortController();
    const entry: Entry<T> = { promise: null as unknown as Promise<T>, controller, shared: false };
    entry.promise = this.send(query, controller.signal).then(reply => {
      const view = pick(reply);
      if (!reply.ok || !view) {
        throw failure(reply);
      }
      this.seen(reply);
      entry.value = view;
      return view;
    });
    entry.promise.catch(() => kept.drop(key, entry)); // a failure is asked again next time
    kept.set(key, entry);
    this.stopWith(signal, entry, () => kept.drop(key, entry));
    return entry.promise;
  }

  private stopWith(signal: AbortSignal | undefined, entry: Entry<unknown>, forget: () => void): void {
    if (!signal) {
      entry.shared = true; // asked by someone who never stops waiting
      return;
    }
    const stop = () => {
      if (entry.value === undefined && !entry.shared) {
        forget();
        entry.controller?.abort();
      }
    };
    if (signal.aborted) {
      stop();
    } else {
      signal.addEventListener('abort', stop, { once: true });
    }
  }

  /** One turn of one agent (kept for the file version it was read from). */
  turn(agent: string, turn: number, signal?: AbortSignal): Promise<TurnView> {
    return this.one(this.turns, turnKey(agent, turn), { what: 'turn', agent, turn }, r => r.turn_view, signal);
  }

  /** The first builds of two turns compared (kept like the turns). */
  diff(agent: string, a: number, b: number, signal?: AbortSignal): Promise<TurnDiffView> {
    return this.one(this.diffs, diffKey(agent, a, b), { what: 'diff', agent, a, b }, r => r.diff, signal);
  }

  /**
   * Ask in one question for the turns and pairs not kept yet (at most `MAX_BATCH` of each); they are kept
   * as they come. Resolves with how many were asked (0: all were kept or asked already). A turn or pair the
   * answer leaves out (Python could not read it) is asked on its own when someone waits for it, so its
   * error is Python's; when `signal` aborts, what nobody else waits for is forgotten.
   */
  readAhead(agent: string, turns: number[], pairs: Array<[number, number]>, signal?: AbortSignal): Promise<number> {
    const wantTurns = [...new Set(turns)].filter(t => !this.hasTurn(agent, t)).slice(0, MAX_BATCH);
    const seenPairs = new Set<string>();
    const wantPairs = pairs.filter(([a, b]) => {
      const k = diffKey(agent, a, b);
      if (seenPairs.has(k) || this.hasDiff(agent, a, b)) {
        return false;
      }
      seenPairs.add(k);
      return true;
    }).slice(0, MAX_BATCH);
    if (!wantTurns.length && !wantPairs.length) {
      return Promise.resolve(0);
    }
    const controller = new AbortController();
    const batch = this.send({ what: 'turns', agent, turns: wantTurns, pairs: wantPairs.map(([a, b]) => ({ a, b })) },
      controller.signal).then(reply => {
      if (reply.ok) {
        this.seen(reply);
      }
      return reply;
    });
    const entries: Array<Entry<unknown>> = [];
    const forget: Array<() => void> = [];
    const take = <T>(kept: Kept<T>, key: string, find: (r: TraceReply) => T | undefined, alone: () => Promise<T>) => {
      const entry: Entry<T> = { promise: null as unknown as Promise<T>, controller, shared: false };
      entry.promise = batch.then(reply => {
        const view = reply.ok ? find(reply) : undefined;
        if (view !== undefined) {
          entry.value = view;
          return view;
        }
        kept.drop(key, entry);
        if (entry.shared) {
          return alone(); // left out, and a view waits for it: asked on its own (its error is Python's)
        }
        throw failure(reply.ok ? { ok: false, message: 'left out of the read-ahead' } : reply);
      }, err => {
        kept.drop(key, entry);
        if (entry.shared) {
          return alone(); // the read-ahead failed or stopped, and a view waits for this one
        }
        throw err;
      });
      entry.promise.catch(() => kept.drop(key, entry));
      kept.set(key, entry);
      entries.push(entry as Entry<unknown>);
      forget.push(() => kept.drop(key, entry));
    };
    for (const t of wantTurns) {
      take(this.turns, turnKey(agent, t), r => r.turn_views?.find(v => v.agent === agent && v.turn === t),
        () => this.turn(agent, t));
    }
    for (const [a, b] of wantPairs) {
      take(this.diffs, diffKey(agent, a, b), r => r.diffs?.find(d => d.agent === agent && d.turn_a === a && d.turn_b === b),
        () => this.diff(agent, a, b));
    }
    if (signal) {
      const stop = () => {
        if (entries.every(e => e.value === undefined && !e.shared)) {
          forget.forEach(f => f());
          controller.abort(); // nobody waits for any of it: the server need not read it
        }
      };
      if (signal.aborted) {
        stop();
      } else {
        signal.addEventListener('abort', stop, { once: true });
      }
    }
    return batch.then(() => wantTurns.length + wantPairs.length, () => wantTurns.length + wantPairs.length);
  }
}

/** The query string of a question about the trace at `path`: `turns=3,4` and `pairs=2:3,3:4` for a read-ahead. */
export function traceParams(path: string, query: TraceQuery): string {
  const params = new URLSearchParams({ path });
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || (Array.isArray(v) && !v.length)) {
      continue;
    }
    if (k === 'pairs') {
      params.set(k, (v as Array<{ a: number; b: number }>).map(p => `${p.a}:${p.b}`).join(','));
    } else {
      params.set(k, Array.isArray(v) ? v.join(',') : String(v));
    }
  }
  return params.toString();
}

/** The step of a turn with this number (undefined when the turn has none). */
export function stepOf(view: TurnView | null | undefined, step: number): NonNullable<TurnView['steps']>[number] | undefined {
  return view?.steps?.find(s => s.step === step);
}
