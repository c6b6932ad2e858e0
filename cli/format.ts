/**
 * How the CLI shows what it read: session ids as 0x hex, ages from a node's ctime, node data as
 * UTF-8 when it is printable text and as hex otherwise, truncated, aligned text tables, and no
 * character a terminal would obey unseen.
 */

/** Node data as shown: text when the bytes are printable UTF-8, else hex; cut to a bound. */
export interface ShownData {
  readonly encoding: 'utf8' | 'hex';
  /** The text, or the hex digits of the first bytes. */
  readonly value: string;
  /** The node's data length in bytes. */
  readonly bytes: number;
  /** Whether `value` stops before the end of the data. */
  readonly truncated: boolean;
}

/** Text longer than this many characters is cut, in both text and JSON output. */
export const MAX_TEXT_CHARS = 64;
/** Binary data shows at most this many bytes as hex. */
export const MAX_HEX_BYTES = 32;

const utf8 = new TextDecoder('utf-8', { fatal: true });
// Printable: no C0 or C1 controls (tab aside), no DEL; what a terminal shows as it is.
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u0008\u000A-\u001F\u007F-\u009F]/;

// Format characters (Unicode Cf: bidi overrides and isolates, zero-width characters, the BOM, …)
// and the line and paragraph separators (Zl, Zp). ZooKeeper allows them in names, and a terminal
// obeys them unseen: a name or a value holding one could reorder, hide or split what is printed
// around it. Control characters cannot be in names, and make data show as hex.
const INVISIBLE = /[\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * `text` with every format character and line or paragraph separator written as a `\uXXXX`
 * escape (one per UTF-16 unit), so what is printed shows as it is. In JSON the escapes read back
 * as the characters they stand for.
 */
export function escapeInvisible(text: string): string {
  return text.replace(INVISIBLE, (c) => {
    let escaped = '';
    for (let i = 0; i < c.length; i++) escaped += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return escaped;
  });
}

/** `data` as the CLI shows it. */
export function showData(data: Buffer): ShownData {
  let text: string | undefined;
  try {
    text = utf8.decode(data);
  } catch {
    text = undefined;
  }
  if (text !== undefined && !UNPRINTABLE.test(text)) {
    const chars = [...text];
    const truncated = chars.length > MAX_TEXT_CHARS;
    return { encoding: 'utf8', value: truncated ? chars.slice(0, MAX_TEXT_CHARS).join('') : text, bytes: data.length, truncated };
  }
  const truncated = data.length > MAX_HEX_BYTES;
  return { encoding: 'hex', value: data.subarray(0, MAX_HEX_BYTES).toString('hex'), bytes: data.length, truncated };
}

/** One line of text for shown data: `"text"`, or `0x0a0b…` with the length when binary or cut. */
export function dataText(data: ShownData): string {
  if (data.bytes === 0) return '(empty)';
  if (data.encoding === 'utf8') return data.truncated ? `${JSON.stringify(data.value).slice(0, -1)}…" (${data.bytes} bytes)` : JSON.stringify(data.value);
  return `0x${data.value}${data.truncated ? '…' : ''} (${data.bytes} bytes)`;
}

/** A session id as ZooKeeper's own tools print it: `0x` and lower-case hex. */
export function sessionHex(id: bigint): string {
  return `0x${id.toString(16)}`;
}

/** The owner of an ephemeral node as hex; null for a node no session owns. */
export function ownerOf(ephemeralOwner: bigint): string | null {
  return ephemeralOwner === 0n ? null : sessionHex(ephemeralOwner);
}

/** How long ago `ctimeMs` was, never negative (the server's clock may run ahead of ours). */
export function ageOf(ctimeMs: number, nowMs: number): number {
  return Math.max(0, nowMs - ctimeMs);
}

/** A duration for people: `850ms`, `12.3s`, `4m05s`, `2h10m`, `3d04h`. */
export function durationText(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const s = Math.floor(ms / 1_000);
  if (s < 3_600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  if (s < 86_400) return `${Math.floor(s / 3_600)}h${String(Math.floor((s % 3_600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86_400)}d${String(Math.floor((s % 86_400) / 3_600)).padStart(2, '0')}h`;
}

/** Rows as columns aligned with two spaces between them; trailing spaces trimmed. Cells are escaped (`escapeInvisible`) before they are measured. */
export function table(cells: readonly (readonly string[])[]): string[] {
  const rows = cells.map((row) => row.map(escapeInvisible));
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, [...cell].length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat(widths[i] - [...cell].length))).join('  ').trimEnd());
}

/** `1 holder`, `2 holders`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
