/**
 * A tiny element builder. Strings become text nodes, attributes go through setAttribute with a
 * fixed allow-list: nothing here can turn model or user text into HTML or an event handler.
 */

export type Child = Node | string | number | null | undefined | false;

const ALLOWED_ATTR = /^(class|id|title|role|tabindex|type|min|max|step|value|for|name|start|placeholder|disabled|hidden|colspan|lang|aria-[a-z]+|data-[a-z-]+)$/;

export function h(tag: string, attrs: Record<string, string | number | boolean | null | undefined> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) {
      continue;
    }
    if (!ALLOWED_ATTR.test(k)) {
      throw new Error(`attribute not allowed: ${k}`);
    }
    el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, ...children);
  return el;
}

export function append(el: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) {
      continue;
    }
    el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

export function clear(el: Node): void {
  while (el.firstChild) {
    el.removeChild(el.firstChild);
  }
}

let counter = 0;
export function uid(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}-${Math.random().toString(36).slice(2, 7)}`;
}

/**
 * A section with a heading button that expands and collapses its body (aria-expanded), the body
 * built lazily on first expansion.
 */
export function collapsible(title: Child, build: () => Node, open = false, extraClass = ''): HTMLElement {
  const bodyId = uid('arcana-sec');
  const btn = h('button', { type: 'button', class: 'arcana-disclosure', 'aria-expanded': String(open), 'aria-controls': bodyId }, h('span', { class: 'arcana-caret', 'aria-hidden': 'true' }), title);
  const body = h('div', { class: 'arcana-section-body', id: bodyId });
  let built = false;
  const sync = (isOpen: boolean) => {
    btn.setAttribute('aria-expanded', String(isOpen));
    body.hidden = !isOpen;
    if (isOpen && !built) {
      built = true;
      body.appendChild(build());
    }
  };
  btn.addEventListener('click', () => sync(btn.getAttribute('aria-expanded') !== 'true'));
  sync(open);
  return h('section', { class: ('arcana-section ' + extraClass).trim() }, h('h4', { class: 'arcana-section-title' }, btn), body);
}

/** Preformatted text (whitespace kept), always as a text node. */
export function pre(text: string | null | undefined, cls = 'arcana-pre'): HTMLElement {
  return h('pre', { class: cls }, text ?? '');
}
