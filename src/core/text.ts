// Bounded, cleaned strings: the only kind that leaves a reducer.

// CSI, OSC and two-byte escape sequences, as terminals print them.
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;
// C0 and C1 controls, DEL, and the line/paragraph separators: none is worth printing.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
}

/** `value` as a single printable line of at most `max` characters, or "" when it is no string. */
export function clean(value: unknown, max: number): string {
  if (typeof value !== "string" || value.length === 0) return "";
  // Cut early so a huge string costs no more than a small one.
  const head = value.length > max * 4 + 64 ? value.slice(0, max * 4 + 64) : value;
  const flat = stripAnsi(head).replace(CONTROL, " ").trim();
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
