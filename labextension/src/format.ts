/** Number and value formatting shared by the inspector and the trace viewer (pure, no DOM). */

export function fmtInt(n: number | null | undefined): string {
  if (typeof n !== 'number' || !Number.isFinite(n)) {
    return '—';
  }
  return Math.round(n).toLocaleString('en-US');
}

export function fmtPct(x: number | null | undefined): string {
  if (typeof x !== 'number' || !Number.isFinite(x)) {
    return '—';
  }
  return (x * 100).toFixed(x < 0.1 ? 1 : 0) + '%';
}

export function fmtScore(x: number | null | undefined): string {
  if (typeof x !== 'number' || !Number.isFinite(x)) {
    return '';
  }
  return x.toFixed(3);
}

export function fmtCost(x: number | null | undefined): string {
  if (typeof x !== 'number' || !Number.isFinite(x)) {
    return '—';
  }
  return '$' + (x === 0 ? '0' : x < 0.01 ? x.toFixed(6) : x.toFixed(4));
}

export function fmtMs(x: number | null | undefined): string {
  if (typeof x !== 'number' || !Number.isFinite(x)) {
    return '—';
  }
  return x >= 1000 ? (x / 1000).toFixed(2) + ' s' : x.toFixed(0) + ' ms';
}

/** A turn's latency and how it splits between the model (its calls) and the runtime (the rest). */
export function fmtLatency(total: number | null | undefined, model: number | null | undefined): string {
  if (typeof total !== 'number' || !Number.isFinite(total)) {
    return '—';
  }
  if (typeof model !== 'number' || !Number.isFinite(model)) {
    return fmtMs(total);
  }
  return `${fmtMs(total)} (model ${fmtMs(model)}, runtime ${fmtMs(Math.max(0, total - model))})`;
}

/** How a step's prompt was counted, in one line: the tokenizer, the model's own count, the calibration. */
export function fmtCounting(c: { encoding?: string | null; ratio?: number | null; counted?: number | null; reported?: number | null } | null | undefined): string {
  if (!c) {
    return '';
  }
  const parts: string[] = [];
  if (typeof c.encoding === 'string' && c.encoding) {
    parts.push(
      c.encoding.startsWith('gguf:')
        ? `counted with the model's own tokenizer (${c.encoding.slice(5).split('/').pop()})`
        : `counted with ${c.encoding}`
    );
  }
  if (typeof c.reported === 'number' && typeof c.counted === 'number' && c.reported !== c.counted) {
    parts.push(`the model counted ${fmtInt(c.reported)} for ${fmtInt(c.counted)}`);
  }
  if (typeof c.ratio === 'number' && Number.isFinite(c.ratio) && c.ratio > 1) {
    parts.push(`budget calibrated ×${c.ratio.toFixed(3)}`);
  }
  return parts.join(' · ');
}

/** Any JSON value as readable text (strings as they are), cut at `max` characters. */
export function valueText(v: unknown, max = 4000): string {
  let s: string;
  if (typeof v === 'string') {
    s = v;
  } else if (v === undefined) {
    s = '';
  } else {
    try {
      s = JSON.stringify(v, null, 1) ?? String(v);
    } catch {
      s = String(v);
    }
  }
  return s.length > max ? s.slice(0, max) + `… (${s.length - max} more characters)` : s;
}

/** First line of a text, shortened, for one-line previews. */
export function preview(s: string | null | undefined, max = 120): string {
  if (typeof s !== 'string') {
    return '';
  }
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat;
}
