/**
 * Unit tests of the widget's request link (src/widget.ts): requests over anywidget's custom messages,
 * answered by `request_id` in any order; unrelated messages ignored; a silent kernel times out;
 * disposing answers what is pending with null and stops listening. The model here is an in-memory
 * object with anywidget's `on`/`off`/`send`; the kernel's side is tests/jupyter/test_widget.py.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { ActionRequest, KernelReply, StateRequest } from '../src/schema.gen';
import { WidgetLink, WidgetModel } from '../src/widget';

class MemoryModel implements WidgetModel {
  readonly sent: Record<string, unknown>[] = [];
  private handlers = new Map<string, Set<(...args: any[]) => void>>();
  get(): unknown {
    return undefined;
  }
  on(event: string, cb: (...args: any[]) => void): void {
    if (!this.handlers.has(event)) {
      this.handlers.set(event, new Set());
    }
    this.handlers.get(event)!.add(cb);
  }
  off(event?: string | null, cb?: ((...args: any[]) => void) | null): void {
    if (event && cb) {
      this.handlers.get(event)?.delete(cb);
    }
  }
  send(content: Record<string, unknown>): void {
    this.sent.push(content);
  }
  /** A custom message from the kernel. */
  deliver(msg: unknown): void {
    for (const cb of this.handlers.get('msg:custom') ?? []) {
      cb(msg);
    }
  }
  listeners(event: string): number {
    return this.handlers.get(event)?.size ?? 0;
  }
}

test('widget link: answers are matched by request_id, in any order', async () => {
  const model = new MemoryModel();
  const link = new WidgetLink(model);
  const state: StateRequest = { type: 'state', run_id: 'r_1', agent: 'main' };
  const unpin: ActionRequest = { type: 'action', action: 'unpin', target: 'p_1', run_id: 'r_1', agent: 'main' };
  const a = link.request(state);
  const b = link.request(unpin);
  assert.equal(model.sent.length, 2);
  const [ida, idb] = model.sent.map(m => m.request_id as string);
  assert.notEqual(ida, idb);
  assert.equal(model.sent[1].action, 'unpin');
  model.deliver({ type: 'state', live: true, request_id: 'someone-else' }); // not ours: ignored
  const actionReply: KernelReply = { type: 'action', ok: true, message: 'unpin p_1: done', live: true, pins: [], request_id: idb };
  model.deliver(actionReply);
  model.deliver({ type: 'state', live: true, turn: 2, pins: [], tiers: {}, request_id: ida });
  const [ra, rb] = await Promise.all([a, b]);
  assert.equal(ra && ra.type, 'state');
  assert.equal(rb && 'ok' in rb && rb.ok, true);
  link.dispose();
});

test('widget link: a kernel that never answers times out with null', async () => {
  const model = new MemoryModel();
  const link = new WidgetLink(model, 20);
  assert.equal(await link.request({ type: 'state', run_id: 'r_1', agent: 'main' }), null);
  link.dispose();
});

test('widget link: dispose answers what is pending with null and stops listening', async () => {
  const model = new MemoryModel();
  const link = new WidgetLink(model);
  assert.equal(model.listeners('msg:custom'), 1);
  const pending = link.request({ type: 'state', run_id: 'r_1', agent: 'main' });
  link.dispose();
  assert.equal(await pending, null);
  assert.equal(model.listeners('msg:custom'), 0);
});
