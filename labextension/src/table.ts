/**
 * A sortable, virtualised table: only the rows in view (plus a few) exist in the DOM, so a table
 * of thousands of decisions opens and scrolls as fast as one of ten. Rows are focusable (roving
 * tabindex: arrows, Home/End, Enter/Space to expand); an expanded row shows a detail pane of fixed
 * height right below it. Cells are text or nodes built by the caller with text nodes only.
 */

import { Child, clear, h, uid } from './dom';

export interface Column<T> {
  id: string;
  label: string;
  /** A CSS grid track, e.g. "4em" or "minmax(8em, 1fr)". */
  width: string;
  cell: (row: T) => Child;
  sortValue?: (row: T) => number | string;
  title?: (row: T) => string;
  className?: string;
}

export interface TableOptions<T> {
  columns: Column<T>[];
  label: string;
  rowHeight?: number;
  detailHeight?: number;
  maxHeight?: number;
  detail?: (row: T) => Node;
  rowClass?: (row: T) => string;
  emptyText?: string;
}

type SortDir = 'ascending' | 'descending';

export class VirtualTable<T> {
  readonly node: HTMLElement;
  private readonly opts: Required<Omit<TableOptions<T>, 'detail' | 'rowClass'>> & Pick<TableOptions<T>, 'detail' | 'rowClass'>;
  private readonly viewport: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly header: HTMLElement;
  private readonly empty: HTMLElement;
  private readonly template: string;
  private source: T[] = [];
  private rows: T[] = [];
  private offsets: number[] = [0];
  private expanded = new Set<T>();
  /** Measured height of each expanded row's detail pane (content height, capped). */
  private detailHeights = new Map<T, number>();
  private sortCol: string | null = null;
  private sortDir: SortDir = 'ascending';
  private active = 0;
  private frame = 0;
  private readonly idBase = uid('arcana-row');

  constructor(options: TableOptions<T>) {
    this.opts = {
      rowHeight: 28,
      detailHeight: 200,
      maxHeight: 360,
      emptyText: 'Nothing to show.',
      ...options
    };
    this.template = this.opts.columns.map(c => c.width).join(' ');
    this.header = h('div', { class: 'arcana-vt-row arcana-vt-head', role: 'row', 'aria-rowindex': 1 });
    this.header.style.gridTemplateColumns = this.template;
    for (const col of this.opts.columns) {
      const cellAttrs = { class: 'arcana-vt-cell arcana-vt-hcell', role: 'columnheader', 'data-col': col.id };
      if (col.sortValue) {
        const btn = h('button', { type: 'button', class: 'arcana-vt-sort', title: `Sort by ${col.label}` }, col.label, h('span', { class: 'arcana-vt-sort-ind', 'aria-hidden': 'true' }));
        btn.addEventListener('click', () => this.toggleSort(col.id));
        this.header.appendChild(h('div', { ...cellAttrs, 'aria-sort': 'none' }, btn));
      } else {
        this.header.appendChild(h('div', cellAttrs, col.label));
      }
    }
    this.spacer = h('div', { class: 'arcana-vt-spacer', role: 'rowgroup' });
    this.viewport = h('div', { class: 'arcana-vt-viewport' }, this.spacer);
    this.viewport.style.maxHeight = `${this.opts.maxHeight}px`;
    this.viewport.addEventListener('scroll', () => this.schedule());
    this.empty = h('div', { class: 'arcana-vt-empty' }, this.opts.emptyText);
    this.node = h('div', { class: 'arcana-vt', role: 'table', 'aria-label': this.opts.label }, this.header, this.viewport, this.empty);
    this.node.addEventListener('keydown', e => this.onKey(e));
    if (typeof ResizeObserver !== 'undefined') {
      new ResizeObserver(() => this.schedule()).observe(this.viewport);
    }
  }

  /** Replace the rows (keeps the current sort; clears expansion of rows that are gone). */
  setRows(rows: T[]): void {
    this.source = rows.slice();
    const keep = new Set(rows);
    for (const r of [...this.expanded]) {
      if (!keep.has(r)) {
        this.expanded.delete(r);
      }
    }
    this.applySort();
    this.active = Math.min(this.active, Math.max(0, this.rows.length - 1));
    this.viewport.scrollTop = 0;
    this.layout();
  }

  get rowCount(): number {
    return this.rows.length;
  }

  sortBy(colId: string, dir: SortDir): void {
    this.sortCol = colId;
    this.sortDir = dir;
    this.applySort();
    this.layout();
  }

  private toggleSort(colId: string): void {
    if (this.sortCol === colId) {
      this.sortDir = this.sortDir === 'ascending' ? 'descending' : 'ascending';
    } else {
      this.sortCol = colId;
      this.sortDir = 'ascending';
    }
    this.applySort();
    this.layout();
  }

  private applySort(): void {
    const col = this.opts.columns.find(c => c.id === this.sortCol);
    for (const hc of Array.from(this.header.children)) {
      if (hc.hasAttribute('aria-sort')) {
        hc.setAttribute('aria-sort', (hc as HTMLElement).dataset.col === this.sortCol ? this.sortDir : 'none');
      }
    }
    if (!col || !col.sortValue) {
      this.rows = this.source.slice();
      return;
    }
    const key = col.sortValue;
    const sign = this.sortDir === 'ascending' ? 1 : -1;
    const decorated = this.source.map((r, i) => ({ r, i, k: key(r) }));
    decorated.sort((a, b) => {
      const ka = a.k;
      const kb = b.k;
      let c: number;
      if (typeof ka === 'number' && typeof kb === 'number') {
        c = ka - kb;
      } else {
        c = String(ka).localeCompare(String(kb));
      }
      return c !== 0 ? c * sign : a.i - b.i;
    });
    this.rows = decorated.map(d => d.r);
  }

  private heightOf(i: number): number {
    const row = this.rows[i];
    if (!this.expanded.has(row)) {
      return this.opts.rowHeight;
    }
    return this.opts.rowHeight + (this.detailHeights.get(row) ?? this.opts.detailHeight);
  }

  private layout(): void {
    const n = this.rows.length;
    const offsets = new Array<number>(n + 1);
    offsets[0] = 0;
    for (let i = 0; i < n; i++) {
      offsets[i + 1] = offsets[i] + this.heightOf(i);
    }
    this.offsets = offsets;
    this.spacer.style.height = `${offsets[n]}px`;
    this.node.setAttribute('aria-rowcount', String(n + 1));
    this.empty.hidden = n > 0;
    this.render();
  }

  private schedule(): void {
    if (this.frame) {
      return;
    }
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  private indexAt(y: number): number {
    let lo = 0;
    let hi = this.rows.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.offsets[mid] <= y) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return Math.max(0, lo);
  }

  private render(): void {
    const n = this.rows.length;
    const hadFocus = this.spacer.contains(document.activeElement);
    clear(this.spacer);
    if (n === 0) {
      return;
    }
    const top = this.viewport.scrollTop;
    const height = this.viewport.clientHeight || this.opts.maxHeight;
    const overscan = 6;
    const first = Math.max(0, this.indexAt(top) - overscan);
    const last = Math.min(n - 1, this.indexAt(top + height) + overscan);
    const frag = document.createDocumentFragment();
    for (let i = first; i <= last; i++) {
      frag.appendChild(this.renderRow(i));
    }
    this.spacer.appendChild(frag);
    if (hadFocus) {
      this.rowEl(this.active)?.focus({ preventScroll: true });
    }
    this.measureDetails();
  }

  /** Fit each open detail pane to its content (up to detailHeight), then lay out again once. */
  private measureDetails(): void {
    let changed = false;
    for (const det of Array.from(this.spacer.querySelectorAll<HTMLElement>('.arcana-vt-detail'))) {
      const i = Number(det.dataset.detail);
      const row = this.rows[i];
      if (row === undefined) {
        continue;
      }
      const prev = det.style.height;
      det.style.height = 'auto';
      const content = det.scrollHeight;
      det.style.height = prev;
      if (!content) {
        continue; // not laid out (hidden): keep the default
      }
      const want = Math.min(this.opts.detailHeight, Math.max(this.opts.rowHeight, content + 2));
      const have = this.detailHeights.get(row) ?? this.opts.detailHeight;
      if (Math.abs(want - have) > 2) {
        this.detailHeights.set(row, want);
        changed = true;
      }
    }
    if (changed) {
      const top = this.viewport.scrollTop;
      this.layout();
      this.viewport.scrollTop = top;
    }
  }

  private renderRow(i: number): HTMLElement {
    const row = this.rows[i];
    const isOpen = this.expanded.has(row);
    const cls = 'arcana-vt-row arcana-vt-body-row' + (this.opts.rowClass ? ' ' + this.opts.rowClass(row) : '') + (isOpen ? ' arcana-vt-open' : '');
    const el = h('div', {
      class: cls,
      role: 'row',
      id: `${this.idBase}-${i}`,
      'aria-rowindex': i + 2,
      tabindex: i === this.active ? 0 : -1,
      'data-index': i,
      'aria-expanded': this.opts.detail ? String(isOpen) : null
    });
    el.style.gridTemplateColumns = this.template;
    el.style.top = `${this.offsets[i]}px`;
    el.style.height = `${this.opts.rowHeight}px`;
    for (const col of this.opts.columns) {
      const cell = h('div', { class: 'arcana-vt-cell' + (col.className ? ' ' + col.className : ''), role: 'cell', title: col.title ? col.title(row) : null }, col.cell(row));
      el.appendChild(cell);
    }
    el.addEventListener('click', () => {
      this.active = i;
      this.toggle(i);
    });
    el.addEventListener('focus', () => {
      this.active = i;
    });
    const wrap = document.createDocumentFragment();
    wrap.appendChild(el);
    if (isOpen && this.opts.detail) {
      const det = h('div', { class: 'arcana-vt-detail', role: 'region', 'aria-label': `Details of row ${i + 1}`, 'data-detail': i }, this.opts.detail(row));
      det.style.top = `${this.offsets[i] + this.opts.rowHeight}px`;
      det.style.height = `${this.detailHeights.get(row) ?? this.opts.detailHeight}px`;
      det.addEventListener('click', e => e.stopPropagation());
      wrap.appendChild(det);
    }
    // A fragment can't be returned as an element: wrap rows and details in a contents-only div.
    const holder = h('div', { class: 'arcana-vt-holder', role: 'presentation' });
    holder.appendChild(wrap);
    return holder;
  }

  private rowEl(i: number): HTMLElement | null {
    return this.spacer.querySelector(`[data-index="${i}"]`);
  }

  toggle(i: number): void {
    if (!this.opts.detail || i < 0 || i >= this.rows.length) {
      return;
    }
    const row = this.rows[i];
    if (this.expanded.has(row)) {
      this.expanded.delete(row);
    } else {
      this.expanded.add(row);
    }
    const top = this.viewport.scrollTop;
    this.layout();
    this.viewport.scrollTop = top;
    this.render();
    this.rowEl(i)?.focus({ preventScroll: true });
  }

  private focusRow(i: number): void {
    const n = this.rows.length;
    if (n === 0) {
      return;
    }
    i = Math.max(0, Math.min(n - 1, i));
    this.active = i;
    const top = this.offsets[i];
    const bottom = top + this.opts.rowHeight;
    const vh = this.viewport.clientHeight || this.opts.maxHeight;
    if (top < this.viewport.scrollTop) {
      this.viewport.scrollTop = top;
    } else if (bottom > this.viewport.scrollTop + vh) {
      this.viewport.scrollTop = bottom - vh;
    }
    this.render();
    this.rowEl(i)?.focus({ preventScroll: true });
  }

  private onKey(e: KeyboardEvent): void {
    const target = e.target as HTMLElement;
    if (!target.classList.contains('arcana-vt-body-row')) {
      return;
    }
    const page = Math.max(1, Math.floor((this.viewport.clientHeight || this.opts.maxHeight) / this.opts.rowHeight) - 1);
    switch (e.key) {
      case 'ArrowDown':
        this.focusRow(this.active + 1);
        break;
      case 'ArrowUp':
        this.focusRow(this.active - 1);
        break;
      case 'PageDown':
        this.focusRow(this.active + page);
        break;
      case 'PageUp':
        this.focusRow(this.active - page);
        break;
      case 'Home':
        this.focusRow(0);
        break;
      case 'End':
        this.focusRow(this.rows.length - 1);
        break;
      case 'Enter':
      case ' ':
        this.toggle(this.active);
        break;
      default:
        return;
    }
    e.preventDefault();
    e.stopPropagation();
  }
}
