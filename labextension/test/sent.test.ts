/**
 * Unit tests of the prompt as sent (src/sha256.ts, src/trace.ts sentPromptOf): SHA-256 against known
 * vectors, Python's canonical JSON, and a prompt_sent chain resolved and verified like the Python's.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { canonicalJson, parseKeepingFloats, PyFloat, sha256Hex } from '../src/sha256';
import { parseTrace, promptDigest, resolvePromptSent, sentPromptOf, sentStatus } from '../src/trace';

test('sha256 of known vectors (empty, abc, two blocks, UTF-8)', () => {
  assert.equal(sha256Hex(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'),
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
  assert.equal(sha256Hex('a'.repeat(1000)), '41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3');
  assert.equal(sha256Hex('\u00e9'), '4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c');
});

test('canonical JSON as Python writes it (sorted keys, no spaces, non-ASCII kept)', () => {
  assert.equal(canonicalJson({ b: 1, a: ['é', null, { d: true, c: 'x"\n' }] }), '{"a":["é",null,{"c":"x\\"\\n","d":true}],"b":1}');
});

let seq = 0;
function ev(event_type: string, turn: number | null, metadata: Record<string, unknown>, parent: string | null = null): string {
  seq += 1;
  return JSON.stringify({ v: 1, event_id: `e_${String(seq).padStart(6, '0')}`, run_id: 'r_test', agent: 'main', turn,
    ts: '2026-12-01T00:00:00Z', event_type, parent_id: parent, metadata });
}

test('a prompt_sent chain resolves (keep, history and previous-prompt references) and verifies', () => {
  seq = 0;
  const sys = { role: 'system', content: 'be brief' };
  const u1 = { role: 'user', content: 'hello' };
  const a1 = { role: 'assistant', content: 'hi' };
  const u2 = { role: 'user', content: 'and now' };
  const block = { role: 'user', content: '<context>pinned</context>' };
  const p1 = [sys, u1];
  const p2 = [sys, u1, a1, block, u2];
  const lines = [
    ev('run_start', null, { system_prompt: 'be brief' }),
    ev('user_message', 1, { message: u1, history_index: 1 }),
    ev('context_decision', 1, { step: 0, request_digest: promptDigest(p1, [], 'm'), builder: { model: 'm' }, tools: [] }),
    ev('prompt_sent', 1, { step: 0, digest: 'x', prev: null, keep: 0, messages: [{ h: 0 }, { h: 1 }], tokens: [3, 2] }, 'e_000003'),
    ev('llm_call', 1, { step: 0, request_digest: promptDigest(p1, [], 'm'), message: a1, history_index: 2 }, 'e_000003'),
    ev('user_message', 2, { message: u2, history_index: 3 }),
    ev('context_decision', 2, { step: 0, request_digest: promptDigest(p2, [], 'm'), builder: { model: 'm' }, tools: [] }),
    ev('prompt_sent', 2, { step: 0, digest: 'y', prev: 'e_000004', keep: 1, messages: [{ p: 1 }, { h: [2, 1] }, block, { h: 3 }], tokens: [2, 5, 3] }, 'e_000007')
  ];
  const t = parseTrace(lines.join('\n') + '\n');
  const one = sentPromptOf(t, 'main', 1);
  const two = sentPromptOf(t, 'main', 2);
  assert.ok(one && typeof one === 'object' && two && typeof two === 'object');
  assert.deepEqual(one.messages, p1);
  assert.deepEqual(two.messages, p2);
  assert.deepEqual(two.tokens, [3, 2, 2, 5, 3]);
  assert.ok(one.verified && two.verified, sentStatus(two));
  assert.match(sentStatus(two), /verified \(digest [0-9a-f]{16}\)/);
  // a broken reference is a readable problem, not a crash
  const bad = parseTrace(lines.slice(0, 7).join('\n') + '\n' +
    ev('prompt_sent', 2, { step: 0, prev: 'e_000004', keep: 9, messages: [] }, 'e_000007') + '\n');
  assert.match(String(sentPromptOf(bad, 'main', 2)), /keep 9 but the previous prompt has 2/);
  // no prompt_sent and no snapshot: null (an older trace)
  assert.equal(sentPromptOf(parseTrace(lines.slice(0, 3).join('\n') + '\n'), 'main', 1), null);
});

test('runs and line edits resolve like the Python (the added last newline dropped)', () => {
  const prev = {
    messages: [{ role: 'system', content: 'head\nold line\ntail' }, { role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }],
    tokens: [5, 1, 2],
    digest: null
  };
  const r = resolvePromptSent(
    { prev: 'e_1', keep: 0, messages: [{ e: [0, [[0, 1], 'new line\n', [2, 1]]] }, { p: [1, 2] }, { h: [0, 2] }], tokens: [6, 7, 8] },
    prev,
    h => [{ role: 'user', content: 'x', name: 'n' }, { role: 'assistant', content: 'y', tool_calls: [{ id: 'c', name: 'f' }] }][h] ?? null
  );
  assert.deepEqual(r.messages, [
    { role: 'system', content: 'head\nnew line\ntail' }, { role: 'user', content: 'a' }, { role: 'assistant', content: 'b' },
    { role: 'user', content: 'x', name: 'n' },
    { role: 'assistant', content: 'y', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }
  ]);
  assert.deepEqual(r.tokens, [6, 1, 2, 7, 8]);
  assert.throws(() => resolvePromptSent({ prev: 'e_1', keep: 0, messages: [{ e: [0, [[0, 9]]] }] }, prev, () => null), /copies lines/);
});

test('a tool schema with floats (1.0, 2.5e-07, 1e+16) verifies: the digest covers them as Python wrote them', () => {
  // Python's json.dumps writes 1.0; JSON.parse reads it as 1 and JSON.stringify would write 1. The
  // digest below is Python's (trace/prompt_sent.py prompt_digest of these messages, tools and model).
  const params = '{"type": "object", "properties": {"x": {"type": "number", "minimum": 1.0, "default": 2.5e-07, "maximum": 1e+16}}}';
  const tool = `{"name": "f", "description": "d", "parameters": ${params}}`;
  const digest = '72be5877dc543346';
  const head = (type: string, id: string, turn: number | null, parent: string | null) =>
    `{"v": 1, "event_id": "${id}", "run_id": "r_f", "agent": "main", "turn": ${turn === null ? 'null' : turn}, "ts": "2026-12-01T00:00:00Z", "event_type": "${type}", "parent_id": ${parent === null ? 'null' : `"${parent}"`}, `;
  const lines = [
    head('run_start', 'e_1', null, null) + '"metadata": {}}',
    head('user_message', 'e_2', 1, null) + '"metadata": {"message": {"role": "user", "content": "hello"}, "history_index": 0}}',
    head('context_decision', 'e_3', 1, null) + `"metadata": {"step": 0, "request_digest": "${digest}", "builder": {"model": "m", "utilization": 0.5}, "tools": [${tool}]}}`,
    head('prompt_sent', 'e_4', 1, 'e_3') + `"metadata": {"step": 0, "digest": "${digest}", "prev": null, "keep": 0, "messages": [{"role": "user", "content": "hello"}], "tokens": [2]}}`,
    head('llm_call', 'e_5', 1, 'e_3') + `"metadata": {"step": 0, "request_digest": "${digest}", "message": {"role": "assistant", "content": "hi"}, "history_index": 1}}`
  ];
  const sent = sentPromptOf(parseTrace(lines.join('\n') + '\n'), 'main', 1);
  assert.ok(sent && typeof sent === 'object');
  assert.equal(sent.digest, digest, sentStatus(sent));
  assert.ok(sent.verified);
  // the numbers are still numbers to everything else
  const parsed = parseKeepingFloats(' [1.0, 2, -0.5, 1e+16, "1.0", {"a": [true, null]}] ').value as unknown[];
  assert.ok(parsed[0] instanceof PyFloat && !((parsed[1] as unknown) instanceof PyFloat));
  assert.equal(JSON.stringify(parsed), '[1,2,-0.5,10000000000000000,"1.0",{"a":[true,null]}]');
  assert.equal(canonicalJson(parsed), '[1.0,2,-0.5,1e+16,"1.0",{"a":[true,null]}]');
  assert.equal(Number(parsed[0]) + 1, 2);
  // a spec with integers only is left as parsed
  const plain = parseTrace([lines[0], lines[1], lines[2].replace(params, '{"type": "object", "properties": {}}')].join('\n') + '\n');
  const md = plain.events[2].metadata;
  assert.ok(!(md.tools[0].parameters.properties instanceof PyFloat));
  assert.deepEqual(md.tools[0].parameters, { type: 'object', properties: {} });
});
