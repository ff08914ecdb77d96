/**
 * SHA-256 (FIPS 180-4) of a string's UTF-8 bytes, synchronous: the viewer recomputes a prompt's
 * request digest (arcana_jupyter/messages.py `request_digest`) to mark it verified, without a kernel
 * and without `crypto.subtle` (async, and absent outside secure contexts).
 */

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
]);

export function sha256Hex(text: string): string {
  const data = new TextEncoder().encode(text);
  const bitLen = data.length * 8;
  const padded = new Uint8Array(((data.length + 9 + 63) >> 6) << 6);
  padded.set(data);
  padded[data.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bitLen / 0x100000000));
  view.setUint32(padded.length - 4, bitLen >>> 0);
  const H = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
  ]);
  const W = new Uint32Array(64);
  const rotr = (x: number, n: number): number => (x >>> n) | (x << (32 - n));
  for (let off = 0; off < padded.length; off += 64) {
    for (let i = 0; i < 16; i++) {
      W[i] = view.getUint32(off + i * 4);
    }
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(W[i - 15], 7) ^ rotr(W[i - 15], 18) ^ (W[i - 15] >>> 3);
      const s1 = rotr(W[i - 2], 17) ^ rotr(W[i - 2], 19) ^ (W[i - 2] >>> 10);
      W[i] = (W[i - 16] + s0 + W[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, h] = [H[0], H[1], H[2], H[3], H[4], H[5], H[6], H[7]];
    for (let i = 0; i < 64; i++) {
      const S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const ch = (e & f) ^ (~e & g);
      const t1 = (h + S1 + ch + K[i] + W[i]) >>> 0;
      const S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (S0 + maj) >>> 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    H[0] = (H[0] + a) >>> 0;
    H[1] = (H[1] + b) >>> 0;
    H[2] = (H[2] + c) >>> 0;
    H[3] = (H[3] + d) >>> 0;
    H[4] = (H[4] + e) >>> 0;
    H[5] = (H[5] + f) >>> 0;
    H[6] = (H[6] + g) >>> 0;
    H[7] = (H[7] + h) >>> 0;
  }
  return Array.from(H, x => x.toString(16).padStart(8, '0')).join('');
}

/**
 * A number Python wrote as a float (`1.0`, `2.5e-07`), with the text it wrote: `JSON.parse` makes
 * `1.0` the number 1, which `JSON.stringify` writes `1` — not the `1.0` Python's digest was made of.
 * `canonicalJson` writes the recorded text back. It is a `Number`, so `JSON.stringify` writes it as one.
 */
export class PyFloat extends Number {
  constructor(readonly source: string) {
    super(Number(source));
  }
}

/**
 * The JSON value starting at `text[start]` (whitespace first allowed), with every number Python wrote
 * as a float (its text has `.`, `e` or `E`) as a {@link PyFloat} that keeps that text; `end` is where
 * the value ends. Throws on malformed JSON. Used for the few values a digest covers (the tool specs).
 */
export function parseKeepingFloats(text: string, start = 0): { value: unknown; end: number } {
  let i = start;
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) {
      i++;
    }
  };
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at ${i}`);
  };
  const str = (): string => {
    const from = i;
    i++; // the opening quote
    while (i < text.length && text[i] !== '"') {
      i += text[i] === '\\' ? 2 : 1;
    }
    if (i >= text.length) {
      fail('unterminated string');
    }
    i++;
    return JSON.parse(text.slice(from, i)) as string;
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const obj: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') {
          fail('expected a key');
        }
        const k = str();
        ws();
        if (text[i] !== ':') {
          fail('expected :');
        }
        i++;
        obj[k] = value();
        ws();
        if (text[i] === ',') {
          i++;
        } else if (text[i] === '}') {
          i++;
          return obj;
        } else {
          fail('expected , or }');
        }
      }
    }
    if (c === '[') {
      i++;
      const arr: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value());
        ws();
        if (text[i] === ',') {
          i++;
        } else if (text[i] === ']') {
          i++;
          return arr;
        } else {
          fail('expected , or ]');
        }
      }
    }
    if (c === '"') {
      return str();
    }
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|NaN|-?Infinity)/.exec(text.slice(i, i + 400));
    if (!m) {
      return fail('unexpected character');
    }
    i += m[0].length;
    const t = m[0];
    if (t === 'true' || t === 'false' || t === 'null') {
      return JSON.parse(t);
    }
    return /[.eE]|NaN|Infinity/.test(t) ? new PyFloat(t) : Number(t);
  };
  const v = value();
  return { value: v, end: i };
}

/** Python's `json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`. */
export function canonicalJson(value: unknown): string {
  if (value instanceof PyFloat) {
    return value.source;
  }
  if (value === null || typeof value !== 'object') {
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) {
    return '[' + value.map(canonicalJson).join(',') + ']';
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter(k => obj[k] !== undefined).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  return '{' + keys.map(k => JSON.stringify(k) + ':' + canonicalJson(obj[k])).join(',') + '}';
}
