/**
 * The row labels (src/labels.ts) on the cases in row_labels.json — the same cases the static HTML's
 * rules are tested on (tests/render/test_row_labels.py), so the inspector and the report agree.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { fmtLatency } from '../src/format';
import { changeLabel, isChange, outcomeLabel, rowFlag, sourceLabel } from '../src/labels';
import { MessageDecision } from '../src/types';

interface Case { d: Partial<MessageDecision>; flag: string | null; source: string; outcome: string }
interface ChangeCase { c: Record<string, unknown>; change: boolean; label: string }

const all = JSON.parse(readFileSync(join(process.cwd(), 'test', 'row_labels.json'), 'utf-8')) as
  { rows: Case[]; changes: ChangeCase[] };
const cases = all.rows;

test('row labels: [PIN] only for pins, [KEEP] for protected sections, [RECENT] vs [REC], where a drop went', () => {
  assert.ok(cases.length >= 9);
  for (const c of cases) {
    const d = { index: 0, role: 'user', token_count_before: 1, token_count_after: 1, ...c.d } as MessageDecision;
    assert.equal(rowFlag(d)?.text ?? null, c.flag, JSON.stringify(c.d));
    assert.equal(sourceLabel(d).replace(/^[a-z]+\//, ''), c.source, JSON.stringify(c.d));
    assert.equal(outcomeLabel(d), c.outcome, JSON.stringify(c.d));
  }
});

test('adaptive-context changes: the checkpoint and reads are not changes, the kind said once, who did it', () => {
  assert.ok(all.changes.length >= 8);
  for (const c of all.changes) {
    assert.equal(isChange(c.c), c.change, JSON.stringify(c.c));
    assert.equal(changeLabel(c.c), c.label, JSON.stringify(c.c));
  }
});

test('latency: the turn, then the model and the runtime', () => {
  assert.equal(fmtLatency(1500, 1200), '1.50 s (model 1.20 s, runtime 300 ms)');
  assert.equal(fmtLatency(80, null), '80 ms');
  assert.equal(fmtLatency(null, 5), '—');
  assert.equal(fmtLatency(100, 120), '100 ms (model 120 ms, runtime 0 ms)');
});
