/**
 * Unit tests of the trace source (src/source.ts), the one client of what Python sends: an overview, a
 * turn and a diff asked as `TraceRequest`s; a turn asked twice is asked once for the same file version,
 * again when a Refresh finds the file changed, and again after a failure; an `ok: false` answer is an
 * error carrying Python's message (the CLI's errors). And the widget's link asks the kernel the same
 * questions (src/widget.ts `asker`).
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { RunView, TraceReply, TurnView } from '../src/schema.gen';
import { TraceQuery, TraceSource } from '../src/source';
import { WidgetLink, WidgetModel } from '../src/widget';

function run(version: string): RunView {
  return { path: 'a.arcana/r.jsonl', version, run_id: 'r', events: 3, turns: { main: [1, 2] }, agents: ['main'] };
}

function turn(n: number): TurnView {
  return { agent: 'main', turn: n, steps: [{ step: 0 }], first_step: 0 };
}

class FakeServer {
  readonly asked: TraceQuery[] = [];
  version = 'v1';
  fail: string | null = null;
  ask = async (q: TraceQuery): Promise<TraceReply> => {
    this.asked.push(q);
    if (this.fail) {
      return { ok: false, message: this.fail };
    }
    const base = { ok: true, version: this.version, what: q.what };
    if (q.what === 'run') {
      return { ...base, run: run(this.version) };
    }
    if (q.what === 'turn') {
      return { ...base, turn_view: turn(Number(q.turn)) };
    }
    return { ...base, diff: { agent: 'main', turn_a: Number(q.a), turn_b: Number(q.b), rows: [] } };
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
