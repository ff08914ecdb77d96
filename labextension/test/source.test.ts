/**
 * Unit tests of the trace source (src/source.ts), the one client of what Python sends: an overview, a
 * turn and a diff asked as `TraceRequest`s; a turn asked twice is asked once for the same file version,
 * again when a Refresh finds the file changed, and again after a failure; an `ok: false` answer is an
 * error carrying Python's message (the CLI's errors). The first turn comes with the overview; a
 * read-ahead asks once for what is not kept; a question nobody waits for is aborted. And the widget's link
 * asks the kernel the same questions (src/widget.ts `asker`).
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { RunView, TraceReply, TurnView } from '../src/schema.gen';
import { TraceQuery, TraceSource, traceParams } from '../src/source';
import { WidgetLink, WidgetModel } from '../src/widget';

function run(version: string): RunView {
  return { path: 'a.arcana/r.jsonl', version, run_id: 'r', events: 3, turns: { main: [1, 2] }, agents: ['main'] };
}

function turn(n: number): TurnView {
  return { agent: 'main', turn: n, steps: [{ step: 0 }], first_step: 0 };
}

class FakeServer {
  readonly asked: TraceQuery[] = [];
  readonly signals: Array<AbortSignal | undefined> = [];
  version = 'v1';
  fail: string | null = null;
  /** Turns the server leaves out of a read-ahead (it could not read them). */
  unreadable = new Set<number>();
  /** While set, answers wait for it. */
  gate: Promise<void> | null = null;
  ask = async (q: TraceQuery, signal?: AbortSignal): Promise<TraceReply> => {
    this.asked.push(q);
    this.signals.push(signal);
    if (this.gate) {
      await this.gate;
    }
    if (signal?.aborted) {
      throw Object.assign(new Error('aborted'), { name: 'AbortError' });
    }
    if (this.fail) {
      return { ok: false, message: this.fail };
    }
    const base = { ok: true, version: this.version, what: q.what };
    const diff = (a: number, b: number) => ({ agent: 'main', turn_a: a, turn_b: b, rows: [] });
    if (q.what === 'run') {
      const last = q.turn === -1 ? 2 : q.turn;
      return { ...base, run: run(this.version), ...(typeof last === 'number' ? { turn_view: turn(last) } : {}) };
    }
    if (q.what === 'turn') {
      if (this.unreadable.has(Number(q.turn))) {
        return { ok: false, message: `turn ${q.turn} cannot be read` };
      }
      return { ...base, turn_view: turn(Number(q.turn)) };
    }
    if (q.what === 'turns') {
      return { ...base, turn_views: (q.turns ?? []).filter(t => !this.unreadable.has(t)).map(turn),
        diffs: (q.pairs ?? []).map(p => diff(p.a, p.b)) };
    }
    return { ...base, diff: diff(Number(q.a), Number(q.b)) };
  };
}

test('a turn is asked once per file version', async () => {
  const server = new FakeServer();
  const source = new TraceSource(server.ask);
  assert.equal((await source.run()).run_id, 'r');
  assert.equal((await source.turn('main', 2)).turn, 2);
  await source.turn('main', 2);
  assert.deepEqual(server.asked.map(q => q.what), ['run', 'turn']);
  server.version = 'v2';
  await source.run(); // a Refresh finds the file changed: the kept turns go
  await source.turn('main', 2);
  assert.deepEqual(server.asked.map(q => q.what), ['run', 'turn', 'run', 'turn']);
  assert.equal(source.currentVersion, 'v2');
});

test('python\'s refusal is an error with its message, and is asked again', async () => {
  const server = new FakeServer();
  const source = new TraceSource(server.ask);
  server.fail = 'run r has no turn 9 for agent main';
  await assert.rejects(source.turn('main', 9), /no turn 9/);
  await assert.rejects(source.run(), /no turn 9/);
  server.fail = null;
  assert.equal((await source.turn('main', 9)).turn, 9);
  assert.equal(server.asked.filter(q => q.what === 'turn').length, 2);
});

test('a diff names its two turns', async () => {
  const server = new FakeServer();
  const d = await new TraceSource(server.ask).diff('main', 1, 2);
  assert.deepEqual([d.turn_a, d.turn_b], [1, 2]);
  assert.deepEqual(server.asked[0], { what: 'diff', agent: 'main', a: 1, b: 2 });
});

test('the first turn comes with the overview, kept', async () => {
  const server = new FakeServer();
  const source = new TraceSource(server.ask);
  await source.run({ turn: -1 });
  assert.deepEqual(server.asked, [{ what: 'run', turn: -1 }]);
  assert.equal(source.turnNow('main', 2)?.turn, 2);
  assert.equal((await source.turn('main', 2)).turn, 2);
  assert.equal(server.asked.length, 1);
});

test('a read-ahead asks once for what is not kept, and a left-out turn is asked alone when awaited', async () => {
  const server = new FakeServer();
  const source = new TraceSource(server.ask);
  await source.turn('main', 3);
  server.unreadable.add(6).add(7);
  const asked = await source.readAhead('main', [3, 4, 5, 6, 7], [[3, 4], [4, 5]]);
  assert.equal(asked, 6);
  assert.deepEqual(server.asked[1], { what: 'turns', agent: 'main', turns: [4, 5, 6, 7], pairs: [{ a: 3, b: 4 }, { a: 4, b: 5 }] });
  assert.equal(source.turnNow('main', 5)?.turn, 5);
  assert.equal(source.diffNow('main', 4, 5)?.turn_b, 5);
  assert.equal((await source.turn('main', 4)).turn, 4);
  assert.equal(await source.readAhead('main', [4, 5], [[3, 4]]), 0); // all kept: nothing asked
  assert.equal(server.asked.length, 2);
  // 6 was left out and nobody waited for it; asked now, alone, Python says why
  await assert.rejects(source.turn('main', 6), /turn 6 cannot be read/);
  assert.deepEqual(server.asked[2], { what: 'turn', agent: 'main', turn: 6 });
  // a turn awaited while its read-ahead is on the way, then left out: asked alone for its waiter
  let open!: () => void;
  server.gate = new Promise(r => (open = r));
  const ahead = source.readAhead('main', [8, 9], []);
  server.unreadable.add(9);
  const waited = source.turn('main', 9);
  open();
  server.gate = null;
  await ahead;
  await assert.rejects(waited, /turn 9 cannot be read/);
  assert.deepEqual(server.asked.slice(3).map(q => q.what), ['turns', 'turn']);
});

test('a question nobody waits for any more is aborted and forgotten; one someone else waits for is not', async () => {
  const server = new FakeServer();
  const source = new TraceSource(server.ask);
  let open!: () => void;
  server.gate = new Promise(r => (open = r));
  const left = new AbortController();
  const gone = source.turn('main', 5, left.signal);
  const stays = new AbortController();
  const shared = source.turn('main', 6, stays.signal);
  const other = source.turn('main', 6); // the inspector waits for 6 too
  const aheadStop = new AbortController();
  const ahead = source.readAhead('main', [7, 8], [[6, 7]], aheadStop.signal);
  left.abort();
  stays.abort();
  aheadStop.abort();
  assert.equal(server.signals[0]?.aborted, true);
  assert.equal(server.signals[1]?.aborted, false);
  assert.equal(server.signals[2]?.aborted, true);
  assert.equal(source.hasTurn('main', 5), false);
  assert.equal(source.hasTurn('main', 7), false);
  open();
  server.gate = null;
  await assert.rejects(gone, (err: Error) => err.name === 'AbortError');
  assert.equal((await shared).turn, 6);
  assert.equal((await other).turn, 6);
  assert.equal(await ahead, 3);
  assert.equal((await source.turn('main', 5)).turn, 5); // asked again
});

test('the query string of a read-ahead', () => {
  assert.equal(traceParams('a.arcana/r.jsonl', { what: 'turns', agent: 'main', turns: [3, 4], pairs: [{ a: 2, b: 3 }, { a: 3, b: 4 }] }),
    'path=a.arcana%2Fr.jsonl&what=turns&agent=main&turns=3%2C4&pairs=2%3A3%2C3%3A4');
  assert.equal(traceParams('r.jsonl', { what: 'turn', turn: 2, agent: null, turns: [] }), 'path=r.jsonl&what=turn&turn=2');
});

class KernelModel implements WidgetModel {
  readonly sent: Record<string, unknown>[] = [];
  private cb: ((msg: unknown) => void) | null = null;
  get(): unknown {
    return undefined;
  }
  on(_event: string, cb: (...args: any[]) => void): void {
    this.cb = cb;
  }
  off(): void {
    this.cb = null;
  }
  send(content: Record<string, unknown>): void {
    this.sent.push(content);
    const reply = content.what === 'turn'
      ? { type: 'trace', ok: true, path: 'a.arcana/r.jsonl', turn_view: turn(Number(content.turn)) }
      : { type: 'trace', ok: false, message: 'this run is not open in the kernel' };
    queueMicrotask(() => this.cb?.({ ...reply, request_id: content.request_id }));
  }
}

test('the widget asks the kernel the same questions', async () => {
  const model = new KernelModel();
  const link = new WidgetLink(model, 1000);
  const detail = await link.detail('r', 'main', 3);
  assert.equal(detail?.turn.turn, 3);
  assert.equal(detail?.path, 'a.arcana/r.jsonl');
  assert.deepEqual({ ...model.sent[0], request_id: undefined }, { type: 'trace', run_id: 'r', what: 'turn', agent: 'main', turn: 3, request_id: undefined });
  await assert.rejects(new TraceSource(link.asker('r')).run(), /not open in the kernel/);
  link.dispose();
});
