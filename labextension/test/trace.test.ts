/**
 * Unit tests of the trace logic (src/trace.ts): parsing with torn and corrupt lines, the turn
 * index, decision deltas, active pins and turn diffs. Run with `jlpm test` (tsc to CommonJS, then `node --test`).
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';

import {
  activePins,
  pinsOfBuild,
  decisionOf,
  decisionProblemOf,
  diffTurns,
  getTurn,
  messageFor,
  messageKey,
  parseTrace,
  promptOf,
  resolveDecision
} from '../src/trace';
import { fmtCounting, fmtInt, fmtPct, preview, valueText } from '../src/format';
import type { MessageDecision } from '../src/types';

let seq = 0;
function ev(event_type: string, turn: number | null, metadata: Record<string, unknown> = {}, agent = 'main'): string {
  seq += 1;
  return JSON.stringify({
    v: 1,
    event_id: `e_${String(seq).padStart(6, '0')}`,
    run_id: 'r_20261130_010203_ab12cd',
    agent,
    turn,
    ts: '2026-11-30T01:02:03.000000Z',
    event_type,
    parent_id: null,
    metadata
  });
}

function dec(index: number, outcome: MessageDecision['outcome'], after: number, extra: Partial<MessageDecision> = {}): MessageDecision {
  return {
    index,
    role: index % 2 === 0 ? 'user' : 'assistant',
    outcome,
    fidelity: outcome === 'dropped' ? null : outcome === 'compressed' ? 'L1' : 'L0',
    relevance_score: 0.5,
    token_count_before: 100,
    token_count_after: after,
    reason: 'test',
    layer: 'working',
    source: 'history',
    ...extra
  };
}

function decisionEvent(turn: number, decisions: MessageDecision[], step = 0, inputs: unknown = undefined): string {
  return ev('context_decision', turn, {
    step,
    decision: { turn, step, strategy: 'tail_preserve', requested_strategy: 'auto', utilization_before: 0.5, decisions },
    report: { layers: [], total_before: 0, total_after: 0 },
    budget: { total_window: 1000, response_reserve: 100, available: 900, used: 300, remaining: 600, utilization: 0.33 },
    request_digest: '0123456789abcdef',
    history_len: decisions.length,
    ...(inputs ? { inputs } : {})
  });
}

function lines(...ls: string[]): string {
  return ls.join('\n') + '\n';
}

test('parses a well-formed trace and indexes it by turn', () => {
  const text = lines(
    ev('run_start', null, { model: 'local', arcana_version: '0.1.0' }),
    ev('turn_start', 1),
    ev('user_message', 1, { message: { role: 'user', content: 'hello' }, history_index: 0 }),
    decisionEvent(1, [dec(0, 'kept', 100)]),
    ev('llm_call', 1, { step: 0, message: { role: 'assistant', content: 'hi' }, history_index: 1 }),
    ev('turn_end', 1, { status: 'ok', reply: 'hi' }),
    ev('turn_start', 2),
    ev('user_message', 2, { message: { role: 'user', content: 'more' }, history_index: 2 }),
    decisionEvent(2, [dec(0, 'kept', 100), dec(1, 'kept', 100), dec(2, 'kept', 100)]),
    ev('turn_end', 2, { status: 'ok', reply: 'done' }),
    ev('run_end', null, { turns: 2 })
  );
  const t = parseTrace(text);
  assert.equal(t.problems.length, 0);
  assert.equal(t.events.length, 11);
  assert.equal(t.runId, 'r_20261130_010203_ab12cd');
  assert.equal(t.runStart?.metadata.model, 'local');
  assert.ok(t.runEnd);
  assert.deepEqual(t.turnsByAgent.get('main'), [1, 2]);
  const t2 = getTurn(t, 'main', 2)!;
  assert.equal(t2.turnEnd?.metadata.reply, 'done');
  assert.equal(t2.steps.length, 1);
  assert.equal(decisionOf(t, 'main', 2)?.decisions.length, 3);
  // line numbers are 1-based file lines
  assert.equal(t.lines[0], 1);
  assert.equal(t.lines[10], 11);
  // the transcript
  assert.equal(t.history.get('main')?.get(1)?.content, 'hi');
  assert.equal(messageFor(t, 'main', 2, dec(1, 'kept', 100))?.content, 'hi');
  assert.equal(messageFor(t, 'main', 2, dec(5, 'kept', 100, { source: 'input' }))?.content, 'more');
});

test('a torn last line is a warning and every event before it is kept', () => {
  const full = lines(ev('run_start', null), ev('turn_start', 1), ev('turn_end', 1, { status: 'ok' }));
  const torn = full + ev('turn_start', 2).slice(0, 40);
  const t = parseTrace(torn);
  assert.equal(t.events.length, 3);
  assert.equal(t.problems.length, 1);
  assert.equal(t.problems[0].torn, true);
  assert.equal(t.problems[0].line, 4);
  assert.match(t.problems[0].problem, /torn last line/);
  assert.deepEqual(t.turnsByAgent.get('main'), [1]);
});

test('a complete last line without a final newline is not torn', () => {
  const text = ev('run_start', null) + '\n' + ev('turn_start', 1);
  const t = parseTrace(text);
  assert.equal(t.problems.length, 0);
  assert.equal(t.events.length, 2);
});

test('a corrupt middle line is reported with its line number and the rest is read', () => {
  const text = lines(
    ev('run_start', null),
    ev('turn_start', 1),
    '{"v": 1, "event_type": "llm_call", oops',
    ev('turn_end', 1, { status: 'ok' }),
    '[1, 2, 3]',
    '{"v": 1, "turn": 1}',
    '',
    ev('turn_start', 2)
  );
  const t = parseTrace(text);
  assert.equal(t.events.length, 4);
  assert.deepEqual(t.problems.map(p => [p.line, p.torn]), [[3, false], [5, false], [6, false]]);
  assert.match(t.problems[0].problem, /^invalid JSON/);
  assert.match(t.problems[1].problem, /not a JSON object/);
  assert.match(t.problems[2].problem, /missing "event_type"/);
  assert.equal(t.problems[0].excerpt, '{"v": 1, "event_type": "llm_call", oops');
  // events after the blank line keep their real line numbers
  assert.equal(t.lines[3], 8);
  assert.deepEqual(t.turnsByAgent.get('main'), [1, 2]);
});

test('CRLF line endings and an empty file', () => {
  const t = parseTrace(ev('run_start', null) + '\r\n' + ev('turn_start', 1) + '\r\n');
  assert.equal(t.problems.length, 0);
  assert.equal(t.events.length, 2);
  const empty = parseTrace('');
  assert.equal(empty.events.length, 0);
  assert.equal(empty.problems.length, 0);
});

test('steps, prompt snapshots and agents are indexed separately', () => {
  const text = lines(
    ev('turn_start', 1),
    decisionEvent(1, [dec(0, 'kept', 10)], 0),
    ev('prompt_snapshot', 1, { turn: 1, step: 0, messages: [{ role: 'user', content: 'q' }] }),
    decisionEvent(1, [dec(0, 'kept', 10), dec(1, 'kept', 20)], 1),
    ev('turn_start', 1, {}, 'critic'),
    decisionEvent(1, [dec(0, 'dropped', 0)], 0).replace('"agent":"main"', '"agent":"critic"')
  );
  const t = parseTrace(text);
  assert.deepEqual(t.agents, ['main', 'critic']);
  const info = getTurn(t, 'main', 1)!;
  assert.deepEqual(info.steps.map(s => s.step), [0, 1]);
  assert.equal(decisionOf(t, 'main', 1, 1)?.decisions.length, 2);
  assert.equal(decisionOf(t, 'main', 1)?.decisions.length, 1);
  assert.deepEqual(promptOf(t, 'main', 1, 0), [{ role: 'user', content: 'q' }]);
  assert.equal(promptOf(t, 'main', 1, 1), null);
  assert.equal(decisionOf(t, 'critic', 1)?.decisions[0].outcome, 'dropped');
});

test('indexes 5,000 turns with one pass', () => {
  const parts: string[] = [];
  for (let turn = 1; turn <= 5000; turn++) {
    parts.push(ev('turn_start', turn), decisionEvent(turn, [dec(0, 'kept', 5), dec(1, 'compressed', 3)]), ev('turn_end', turn, { status: 'ok' }));
  }
  const t = parseTrace(lines(...parts));
  assert.equal(t.turnsByAgent.get('main')?.length, 5000);
  assert.equal(getTurn(t, 'main', 4321)?.events.length, 3);
  assert.equal(decisionOf(t, 'main', 5000)?.decisions[1].outcome, 'compressed');
});

function pinEvent(turn: number, pinId: string, extra: Record<string, unknown> = {}, result: Record<string, unknown> = {}): string {
  return ev('cognitive_primitive', turn, {
    primitive: 'pin',
    tool_call_id: 'c' + pinId,
    args: { content: `content of ${pinId}`, label: `label ${pinId}`, ...extra },
    result: { pinned: true, pin_id: pinId, label: `label ${pinId}`, until_turn: extra.until_turn ?? null, already_pinned: false, ...result }
  });
}

test('active pins follow pin, unpin, until_turn and rejected pins', () => {
  const text = lines(
    ev('turn_start', 1),
    pinEvent(1, 'p_a'),
    ev('turn_start', 2),
    pinEvent(2, 'p_b', { until_turn: 3 }),
    pinEvent(2, 'p_rejected', {}, { pinned: false, reason: 'pin_budget_exceeded', pin_id: undefined }),
    ev('turn_start', 3),
    ev('turn_start', 4),
    ev('cognitive_primitive', 4, { primitive: 'unpin', args: { pin_id: 'p_a' }, result: { ok: true, pin_id: 'p_a' } }),
    ev('turn_start', 5),
    pinEvent(5, 'p_a', {}, { label: 'second life' }),
    ev('cognitive_primitive', 5, { primitive: 'unpin', args: { pin_id: 'p_missing' }, result: { ok: false, error: 'unknown pin' } })
  );
  const t = parseTrace(text);
  const ids = (turn: number) => activePins(t, 'main', turn).map(p => p.pin_id);
  assert.deepEqual(ids(1), ['p_a']);
  assert.deepEqual(ids(2), ['p_a', 'p_b']);
  assert.deepEqual(ids(3), ['p_a', 'p_b']);
  assert.deepEqual(ids(4), []); // p_b expired after turn 3, p_a unpinned in turn 4
  assert.deepEqual(ids(5), ['p_a']);
  const p = activePins(t, 'main', 2).find(x => x.pin_id === 'p_b')!;
  assert.equal(p.until_turn, 3);
  assert.equal(p.created_turn, 2);
  assert.equal(p.content, 'content of p_b');
  assert.equal(activePins(t, 'main', 5)[0].label, 'second life');
  assert.equal(activePins(t, 'main', 5)[0].created_turn, 5);
  // another agent's pins are not visible
  assert.deepEqual(activePins(t, 'critic', 5), []);
});

test('a duplicate pin keeps the original label', () => {
  const t = parseTrace(lines(ev('turn_start', 1), pinEvent(1, 'p_x'), ev('turn_start', 2), pinEvent(2, 'p_x', { label: 'other' }, { already_pinned: true, label: 'other' })));
  const pins = activePins(t, 'main', 2);
  assert.equal(pins.length, 1);
  assert.equal(pins[0].label, 'label p_x');
  assert.equal(pins[0].created_turn, 1);
});

test('turn diff lists outcome, fidelity and token changes, added and removed messages', () => {
  const text = lines(
    ev('turn_start', 1),
    ev('user_message', 1, { message: { role: 'user', content: 'u1' }, history_index: 2 }),
    decisionEvent(1, [
      dec(0, 'kept', 100),
      dec(1, 'kept', 100),
      dec(2, 'kept', 50, { source: 'input' }),
      dec(3, 'kept', 30, { source: 'section', section: 'memory_digest', layer: 'external' })
    ]),
    ev('turn_start', 2),
    ev('user_message', 2, { message: { role: 'user', content: 'u2' }, history_index: 4 }),
    decisionEvent(2, [
      dec(0, 'compressed', 40), // outcome + fidelity + tokens changed
      dec(1, 'kept', 100), // unchanged
      dec(2, 'kept', 50), // the turn-1 input, now history #2: unchanged
      dec(3, 'kept', 70), // new history message
      dec(4, 'kept', 60, { source: 'input' }), // new input
      dec(5, 'kept', 20, { source: 'pin', section: 'p_1', pinned: true })
    ])
  );
  const t = parseTrace(text);
  const d = diffTurns(t, 'main', 1, 2);
  const byKey = new Map(d.rows.map(r => [r.key, r]));
  assert.deepEqual(byKey.get('h:0')?.changes, ['outcome', 'fidelity', 'tokens']);
  assert.equal(byKey.has('h:1'), false);
  assert.equal(byKey.has('h:2'), false, 'the input of turn 1 is history #2 in turn 2');
  assert.deepEqual(byKey.get('h:3')?.changes, ['added']);
  assert.deepEqual(byKey.get('h:4')?.changes, ['added']);
  assert.deepEqual(byKey.get('pin:p_1')?.changes, ['added']);
  assert.deepEqual(byKey.get('section:memory_digest')?.changes, ['removed']);
  assert.equal(byKey.get('section:memory_digest')?.b, null);
  assert.equal(d.unchanged, 2);
  assert.equal(d.tokensA, 280);
  assert.equal(d.tokensB, 340);
  assert.deepEqual(d.countsB, { compressed: 1, kept: 5 });
  // removed rows come last
  assert.equal(d.rows[d.rows.length - 1].changes[0], 'removed');
  // the same turn against itself: nothing changed
  const same = diffTurns(t, 'main', 2, 2);
  assert.equal(same.rows.length, 0);
  assert.equal(same.unchanged, 6);
  // a missing turn diffs as empty
  assert.equal(diffTurns(t, 'main', 1, 99).rows.every(r => r.changes[0] === 'removed'), true);
});

test('message keys line up the input of a turn with its later history index', () => {
  const t = parseTrace(lines(ev('turn_start', 3), ev('user_message', 3, { message: { role: 'user', content: 'x' }, history_index: 7 })));
  assert.equal(messageKey(t, 'main', 3, dec(9, 'kept', 1, { source: 'input' })), 'h:7');
  assert.equal(messageKey(t, 'main', 4, dec(9, 'kept', 1, { source: 'input' })), 'input:4');
  assert.equal(messageKey(t, 'main', 3, dec(9, 'kept', 1, { source: 'pin', section: 'p_z' })), 'pin:p_z');
});

test('hostile strings are kept verbatim as data', () => {
  const hostile = '<img src=x onerror=window.__pwned=1><script>window.__pwned=1</script>';
  const t = parseTrace(lines(ev('turn_start', 1), ev('user_message', 1, { message: { role: 'user', content: hostile }, history_index: 0 })));
  assert.equal(t.history.get('main')?.get(0)?.content, hostile);
});

test('formatting helpers', () => {
  assert.equal(fmtInt(1234567), '1,234,567');
  assert.equal(fmtInt(null), '—');
  assert.equal(fmtPct(0.5), '50%');
  assert.equal(fmtPct(0.05), '5.0%');
  assert.equal(preview('a\n\nb   c', 10), 'a b c');
  assert.equal(preview('x'.repeat(20), 5), 'xxxx…');
  assert.equal(valueText({ a: 1 }), '{\n "a": 1\n}');
  assert.match(valueText('y'.repeat(50), 10), /40 more characters/);
});

test('counting line: own tokenizer, a drifting count, calibration (same words as render/turn.py)', () => {
  assert.equal(fmtCounting(null), '');
  assert.equal(
    fmtCounting({ encoding: 'gguf:bundled/SmolLM2-135M-Instruct.Q4_1.gguf', ratio: 1, counted: 812, reported: 812 }),
    "counted with the model's own tokenizer (SmolLM2-135M-Instruct.Q4_1.gguf)"
  );
  assert.equal(
    fmtCounting({ encoding: 'cl100k_base', ratio: 1.107, counted: 700, reported: 761 }),
    'counted with cl100k_base · the model counted 761 for 700 · budget calibrated ×1.107'
  );
});

// ---- decision deltas (arcana_jupyter/trace/decision_delta.py) ----------------------------------

type Row = Record<string, unknown>;

/** decision_delta.columns */
function columnsOf(rows: Row[]): Record<string, unknown[]> {
  if (!rows.length) {
    return {};
  }
  return Object.fromEntries(Object.keys(rows[0]).map(k => [k, rows.map(r => r[k] ?? null)]));
}

/** decision_delta.encode, ported line by line (the Python encoder writes the real traces). */
function encode(rows: Row[], baseRows: Row[] | null): { count: number; columns: Record<string, { same: number[][]; values: unknown[] }> } | null {
  if (baseRows === null || !rows.length) {
    return null;
  }
  const baseCols = columnsOf(baseRows);
  const newCols = columnsOf(rows);
  const keys = Object.keys(newCols);
  if (keys.length !== Object.keys(baseCols).length || !keys.every(k => k in baseCols)) {
    return null;
  }
  const out: Record<string, { same: number[][]; values: unknown[] }> = {};
  let stored = 0;
  for (const key of keys) {
    const col = newCols[key];
    const base = baseCols[key];
    const same: number[][] = [];
    const values: unknown[] = [];
    let start: number | null = null;
    col.forEach((v, i) => {
      if (i < base.length && isDeepStrictEqual(v, base[i])) {
        start = start ?? i;
        return;
      }
      if (start !== null) {
        same.push([start, i]);
        start = null;
      }
      values.push(v);
    });
    if (start !== null) {
      same.push([start, col.length]);
    }
    out[key] = { same, values };
    stored += values.length + 2 * same.length;
  }
  if (stored * 2 > rows.length * keys.length) {
    return null;
  }
  return { count: rows.length, columns: out };
}

/** A deterministic pseudo-random generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A growing session's decisions: old rows stable, ages move outcomes, relevance changes everywhere. */
function sessionDecisions(turn: number, rand: () => number, maxRows = Infinity): MessageDecision[] {
  const n = Math.min(2 * turn + 1, maxRows);
  const out: MessageDecision[] = [];
  for (let i = 0; i < n; i++) {
    const age = n - 1 - i;
    const outcome = i === 0 || age < 6 ? 'kept' : age < 14 ? 'compressed' : 'dropped';
    out.push(dec(i, outcome, outcome === 'dropped' ? 0 : outcome === 'compressed' ? 40 : 100, {
      relevance_score: i === 0 ? null : Math.round(rand() * 1000) / 1000,
      reason: outcome === 'kept' ? (i === 0 ? 'system_always_kept' : 'recent_turn') : 'older_turn',
      turn: i === 0 ? null : Math.ceil(i / 2),
      position: outcome === 'dropped' ? null : i,
      pinned: false,
      section: null // MessageDecision dumps all have the same keys
    }));
  }
  if (turn % 7 === 3) {
    out.push(dec(n, 'kept', 20, { source: 'pin', section: `p_${turn}`, pinned: true, relevance_score: null, turn: null, position: n }));
  }
  return out;
}

/** The same run twice: every decision in full, and as the runtime writes it (keyframes + deltas). */
function fullAndPacked(
  turns: number,
  every = 32,
  opts: { maxRows?: number; keep?: Set<number> } = {}
): { full: string; packed: string; deltas: number; rows: Map<number, MessageDecision[]> } {
  const rand = rng(7);
  const fullLines: string[] = [];
  const packedLines: string[] = [];
  const rows = new Map<number, MessageDecision[]>();
  let base: { id: string; rows: Row[] } | null = null;
  let since = 0;
  let deltas = 0;
  for (let turn = 1; turn <= turns; turn++) {
    const ds = sessionDecisions(turn, rand, opts.maxRows);
    if (!opts.keep || opts.keep.has(turn)) {
      rows.set(turn, ds);
    }
    const start = ev('turn_start', turn);
    const line = decisionEvent(turn, ds);
    const obj = JSON.parse(line);
    if (!opts.keep) {
      fullLines.push(start, line);
    }
    // DeltaEncoder.pack, then keyframe_written for a keyframe.
    const delta = base && since < every ? encode(ds as unknown as Row[], base.rows) : null;
    if (base && delta) {
      since += 1;
      deltas += 1;
      obj.metadata.decision.decisions = null;
      obj.metadata.decision.decisions_delta = { base: base.id, ...delta };
    } else {
      base = { id: obj.event_id, rows: ds as unknown as Row[] };
      since = 0;
    }
    packedLines.push(start, JSON.stringify(obj));
  }
  return { full: lines(...fullLines), packed: lines(...packedLines), deltas, rows };
}

test('decision deltas: keyframes + deltas give exactly the rows of the full trace, turn tables and diffs alike', () => {
  const { full, packed, deltas, rows } = fullAndPacked(80, 8);
  assert.ok(deltas > 40, `most turns are deltas (${deltas} of 80)`);
  assert.ok(packed.length < full.length / 2, 'the packed trace is much smaller');
  const tf = parseTrace(full);
  const tp = parseTrace(packed);
  assert.deepEqual(tp.problems, []);
  assert.equal(tp.deltaBases.size, deltas);
  assert.equal(tp.resolvedDecisions.size, 0, 'rows are rebuilt on demand, not at parse time');
  for (let turn = 1; turn <= 80; turn++) {
    const want = decisionOf(tf, 'main', turn);
    const got = decisionOf(tp, 'main', turn);
    assert.deepStrictEqual(got, want, `turn ${turn}`);
    assert.deepStrictEqual(got?.decisions, rows.get(turn));
    assert.equal('decisions_delta' in (got as object), false);
  }
  assert.ok(tp.resolvedDecisions.size <= 16, 'only the last few rebuilt decisions are kept');
  for (const [a, b] of [[1, 2], [9, 10], [3, 77], [40, 41], [80, 1]]) {
    assert.deepStrictEqual(diffTurns(tp, 'main', a, b), diffTurns(tf, 'main', a, b), `diff ${a} -> ${b}`);
  }
  // The same object again while it is cached.
  assert.equal(decisionOf(tp, 'main', 80), decisionOf(tp, 'main', 80));
});

test('a decision delta resolves exactly as resolve_decision does', () => {
  const base = {
    decisions: [
      { index: 0, outcome: 'kept', score: 0.1, extra: 'x' },
      { index: 1, outcome: 'kept', score: 0.2 },
      { index: 2, outcome: 'dropped', score: 0.3 }
    ]
  };
  const packed = {
    strategy: 'tail_preserve',
    decisions: null,
    decisions_delta: {
      base: 'e_1',
      count: 5,
      columns: {
        // ranges out of order are sorted; positions outside them take the values in order
        index: { same: [[1, 3], [0, 1]], values: [3, 4] },
        outcome: { same: [[0, 2]], values: ['compressed', 'kept', 'kept'] },
        // a negative range bound counts from the end, as in a Python slice: base[-1:3] is [0.3]
        score: { same: [[-1, 3]], values: [0.5, 0.6, 0.7, 0.8] },
        // a column the base does not have (its first row's keys) takes only values
        layer: { same: [], values: ['working', 'working', 'working', 'working', 'working'] }
      }
    }
  };
  const seen: string[] = [];
  const full = resolveDecision(packed, id => {
    seen.push(id);
    return base;
  });
  assert.deepEqual(seen, ['e_1']);
  // What resolve_decision returns for the same input (checked with the Python).
  assert.deepStrictEqual(full, {
    strategy: 'tail_preserve',
    decisions: [
      { index: 0, outcome: 'kept', score: 0.3, layer: 'working' },
      { index: 1, outcome: 'kept', score: 0.5, layer: 'working' },
      { index: 2, outcome: 'compressed', score: 0.6, layer: 'working' },
      { index: 3, outcome: 'kept', score: 0.7, layer: 'working' },
      { index: 4, outcome: 'kept', score: 0.8, layer: 'working' }
    ]
  });
  // a decision without a delta comes back as it is
  const plain = { decisions: [{ index: 0 }], decisions_delta: null };
  assert.equal(resolveDecision(plain, () => null), plain);
  assert.throws(() => resolveDecision({ decisions: null, decisions_delta: { base: 'e_9', count: 0, columns: {} } }, () => null),
    /decision delta refers to e_9, which is not a full decision in this trace/);
  assert.throws(() => resolveDecision({ decisions_delta: { base: 'e_1', count: 4, columns: { index: { same: [[0, 3]], values: [] } } } }, () => base),
    /column 'index' resolves to 3 values, expected 4/);
});

test('a decision delta with a missing base is a problem of that event, not of the trace', () => {
  const ok = decisionEvent(1, [dec(0, 'kept', 10), dec(1, 'kept', 20)]);
  const okId = JSON.parse(ok).event_id;
  const delta = (turn: number, base: string, d: Record<string, unknown> = {}) => {
    const obj = JSON.parse(decisionEvent(turn, []));
    obj.metadata.decision.decisions = null;
    obj.metadata.decision.decisions_delta = {
      base,
      count: 2,
      columns: { index: { same: [[0, 2]], values: [] }, outcome: { same: [[0, 1]], values: ['dropped'] } },
      ...d
    };
    return JSON.stringify(obj);
  };
  const missing = delta(2, 'e_999999');
  const text = lines(
    ev('run_start', null),
    ev('turn_start', 1), ok, ev('turn_end', 1, { status: 'ok' }),
    ev('turn_start', 2), missing, ev('turn_end', 2, { status: 'ok' }),
    ev('turn_start', 3), delta(3, okId), ev('turn_end', 3, { status: 'ok' }),
    ev('turn_start', 4), delta(4, okId, { count: 3 }), // inconsistent with its base
    ev('turn_start', 5), delta(5, JSON.parse(missing).event_id), // its base is a delta, not a keyframe
    '{"v": 1, oops',
    ev('turn_start', 6), delta(6, okId, { columns: { index: { same: [[0, 1], [2, 3]], values: [] } } }) // too few values
  );
  const t = parseTrace(text);
  assert.deepEqual(t.turnsByAgent.get('main'), [1, 2, 3, 4, 5, 6], 'every turn is still there');
  assert.deepEqual(t.problems.map(p => [p.line, p.kind]), [[6, 'event'], [12, 'event'], [14, 'event'], [15, 'line'], [17, 'event']]);
  const [p2, p4, p5, , p6] = t.problems;
  assert.equal(p2.eventId, JSON.parse(missing).event_id);
  assert.equal(p2.torn, false);
  assert.match(p2.problem, /\(turn 2, step 0\): decision delta refers to e_999999, which is not a full decision in this trace/);
  assert.match(p2.excerpt, /"base":"e_999999"/);
  assert.match(p4.problem, /column 'index' resolves to 2 values, expected 3/);
  assert.match(p5.problem, /which is not a full decision in this trace/);
  assert.match(p6.problem, /column 'index' has fewer values than its ranges need/);
  // The turns with a bad delta have no decisions and say why; the others resolve.
  assert.equal(decisionOf(t, 'main', 2), null);
  assert.match(decisionProblemOf(t, 'main', 2) ?? '', /e_999999/);
  assert.equal(decisionProblemOf(t, 'main', 1), null);
  assert.equal(decisionProblemOf(t, 'main', 3), null);
  assert.deepEqual(decisionOf(t, 'main', 3)?.decisions.map(d => [d.index, d.outcome]), [[0, 'kept'], [1, 'dropped']]);
  assert.equal(decisionOf(t, 'main', 1)?.decisions.length, 2);
  // A diff against an unreadable turn lists the readable side only.
  assert.deepEqual(diffTurns(t, 'main', 1, 2).rows.map(r => r.changes[0]), ['removed', 'removed']);
});

test('5,000 turns of keyframes and deltas parse in one pass and resolve on demand', () => {
  const keep = new Set([5000, 4999, 2500, 33, 2]);
  const { packed, deltas, rows } = fullAndPacked(5000, 32, { maxRows: 400, keep });
  assert.ok(deltas > 4000, `${deltas} deltas`);
  const t0 = performance.now();
  const t = parseTrace(packed);
  const parseMs = performance.now() - t0;
  assert.deepEqual(t.problems, []);
  assert.equal(t.turnsByAgent.get('main')?.length, 5000);
  assert.equal(t.resolvedDecisions.size, 0);
  const t1 = performance.now();
  for (const turn of keep) {
    assert.deepStrictEqual(decisionOf(t, 'main', turn)?.decisions, rows.get(turn), `turn ${turn}`);
  }
  const resolveMs = (performance.now() - t1) / 5;
  // Generous bounds (a slow CI machine).
  assert.ok(parseMs < 20000, `parse took ${parseMs.toFixed(0)} ms`);
  assert.ok(resolveMs < 2000, `a turn took ${resolveMs.toFixed(0)} ms`);
  console.log(`5,000-turn delta trace: ${(packed.length / 1e6).toFixed(1)} MB parsed in ${parseMs.toFixed(0)} ms, ${resolveMs.toFixed(1)} ms per turn rebuilt`);
});

test('what the user did before the first turn (turn 0) is not a turn', () => {
  const text = [
    ev('run_start', null, { model: 'local' }),
    ev('user_action', 0, { action: 'memory_add', via: 'magic', ok: true }),
    ev('cognitive_primitive', 0, { primitive: 'pin', source: 'user', args: { content: 'x' }, result: { pinned: true, pin_id: 'p_1' } }),
    ev('turn_start', 1, {}),
    ev('turn_end', 1, { status: 'ok', reply: 'hi' })
  ].join('\n') + '\n';
  const t = parseTrace(text);
  assert.deepEqual(t.turnsByAgent.get('main'), [1]);
});

test('the pins of a build are its decision inputs (a pin made before turn 1, one unpinned after the call)', () => {
  const pin = { pin_id: 'p_x', content: 'the deadline is 30 June', label: 'deadline', until_turn: null, created_turn: 0 };
  const text = lines(
    ev('cognitive_primitive', 0, { primitive: 'pin', args: { content: pin.content, label: 'deadline' }, result: { pinned: true, pin_id: 'p_x' } }),
    ev('turn_start', 1),
    ev('context_decision', 1, { step: 0, inputs: { pins: [pin] } }),
    ev('turn_end', 1, { status: 'ok' }),
    ev('cognitive_primitive', 1, { primitive: 'unpin', args: { pin_id: 'p_x' }, result: { ok: true, pin_id: 'p_x' } }),
    ev('turn_start', 2),
    ev('context_decision', 2, { step: 0, inputs: { pins: [] } }),
    ev('turn_start', 3)
  );
  const t = parseTrace(text);
  assert.deepEqual(activePins(t, 'main', 1), []); // the primitives alone miss it (made at turn 0, unpinned at turn 1)
  assert.deepEqual(pinsOfBuild(t, 'main', 1), [{ pin_id: 'p_x', label: 'deadline', content: pin.content, until_turn: null, created_turn: 0 }]);
  assert.deepEqual(pinsOfBuild(t, 'main', 2), []);
  assert.deepEqual(pinsOfBuild(t, 'main', 3), activePins(t, 'main', 3)); // no decision recorded: the primitives
});
