// Bounded, cleaned strings: the only kind that leaves a reducer.

// CSI, OSC and two-byte escape sequences, as terminals print them.
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;
// C0 and C1 controls, DEL, and the line/paragraph separators: none is worth printing.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

// Bidi overrides, isolates and marks, and zero-width characters: they reorder or hide what a terminal shows.
const INVISIBLE = /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
// What JSON.stringify leaves raw but a terminal may act on: C1 controls, the separators, the invisibles.
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
// Select Graphic Rendition (colour, bold): the one escape sequence a terminal text may keep.
const SGR = /^\u001b\[[0-9;:]*m$/;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
}

/** `value` as a single printable line of at most `max` characters, or "" when it is no string. */
export function clean(value: unknown, max: number): string {
  if (typeof value !== "string" || value.length === 0) return "";
  // Cut early so a huge string costs no more than a small one.
  const head = value.length > max * 4 + 64 ? value.slice(0, max * 4 + 64) : value;
  const flat = stripAnsi(head).replace(CONTROL, " ").replace(INVISIBLE, "").trim();
  if (flat.length <= max) return flat;
  return `${flat.slice(0, Math.max(0, max - 1))}…`;
}

/**
 * A path as the user would type it from `cwd`: relative when it lies under
 * `cwd`, as given otherwise. String work only, so it runs on any runtime.
 */
export function relativePath(value: unknown, cwd: string, max = 160): string {
  if (typeof value !== "string") return "";
  let path = value;
  const base = cwd.endsWith("/") ? cwd.slice(0, -1) : cwd;
  if (base && path.startsWith(`${base}/`)) path = path.slice(base.length + 1);
  else if (base && path === base) path = ".";
  return clean(path, max);
}

/** `value` for a terminal, however long: no escape sequence, no control, no invisible character (ledger strings). */
export function printable(value: string): string {
  return stripAnsi(value).replace(CONTROL, " ").replace(INVISIBLE, "");
}

/**
 * An agent's answer for a terminal: colour kept; every other escape sequence,
 * control character (but newline and tab) and invisible character removed.
 */
export function terminalText(text: string): string {
  return text
    .replace(ANSI, (seq) => (SGR.test(seq) ? seq : ""))
    .replace(/\r\n/g, "\n")
    .replace(/[\u0000-\u0008\u000b-\u001a\u001c-\u001f\u007f-\u009f]/g, "")
    .replace(/\u001b(?!\[[0-9;:]*m)/g, "")
    .replace(INVISIBLE, "");
}

/** JSON text with what a terminal could act on escaped as \\uXXXX: the same value, safe to print. */
export function safeJson(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(JSON_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
