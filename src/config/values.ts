// One value of a setting, read from a flag-shaped layer (a flag, the
// environment, the request a session was born with): checked, typed, or an
// issue naming where it came from. Pure.
import { clean } from "../core/text.ts";

/** What a flag-shaped layer holds: citty's strings and booleans, lists for repeatable flags, numbers from a stored request. */
export type FlagValue = string | number | boolean | readonly string[];
export type FlagRecord = Readonly<Record<string, FlagValue | undefined>>;

export type Read<T> = { ok: true; value: T } | { ok: false; issue: string };

const ok = <T>(value: T): Read<T> => ({ ok: true, value });
const shown = (raw: FlagValue): string => clean(Array.isArray(raw) ? raw.join(",") : String(raw), 60);
const bad = <T>(label: string, what: string, raw: FlagValue): Read<T> => ({
  ok: false,
  issue: `${label} must be ${what}, got "${shown(raw)}"`,
});
const text = (raw: FlagValue): string => (Array.isArray(raw) ? raw.join(",") : String(raw)).trim();

const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;
const INTEGER = /^\d+$/;

export function string(_label: string, raw: FlagValue): Read<string> {
  return ok(Array.isArray(raw) ? raw.join(",") : String(raw));
}

export function boolean(label: string, raw: FlagValue): Read<boolean> {
  if (typeof raw === "boolean") return ok(raw);
  const t = text(raw).toLowerCase();
  if (t === "true" || t === "1" || t === "yes") return ok(true);
  if (t === "false" || t === "0" || t === "no") return ok(false);
  return bad(label, "true or false", raw);
}

export function positiveInt(label: string, raw: FlagValue): Read<number> {
  const t = text(raw);
  const n = Number(t);
  return INTEGER.test(t) && Number.isSafeInteger(n) && n > 0 ? ok(n) : bad(label, "a positive integer", raw);
}

/** A line bound: a positive integer of at most `max` bytes. */
export const lineBound =
  (max: number) =>
  (label: string, raw: FlagValue): Read<number> => {
    const n = positiveInt(label, raw);
    if (n.ok && n.value > max) return { ok: false, issue: `${label} must be at most ${max} (256 MiB), got "${shown(raw)}"` };
    return n;
  };

/** A whole number from `min` to `max`. */
export const wholeNumber =
  (min: number, max: number) =>
  (label: string, raw: FlagValue): Read<number> => {
    const t = text(raw);
    const n = Number(t);
    return INTEGER.test(t) && n >= min && n <= max ? ok(n) : bad(label, `a whole number from ${min} to ${max}`, raw);
  };

/** A number from `min` to `max` (decimals allowed). */
export const decimal =
  (min: number, max: number, what: string) =>
  (label: string, raw: FlagValue): Read<number> => {
    const t = text(raw);
    const n = Number(t);
    return DECIMAL.test(t) && n >= min && n <= max ? ok(n) : bad(label, what, raw);
  };

/** Seconds as milliseconds; `zeroIsNone`: 0 turns the limit off (null). */
export const seconds =
  (zeroIsNone: boolean) =>
  (label: string, raw: FlagValue): Read<number | null> => {
    const t = text(raw);
    const n = Number(t);
    if (!DECIMAL.test(t) || !Number.isFinite(n))
      return bad(label, zeroIsNone ? "a number of seconds (0 for none)" : "a positive number of seconds", raw);
    if (n === 0 && zeroIsNone) return ok(null);
    return n > 0 ? ok(Math.round(n * 1000)) : bad(label, "a positive number of seconds", raw);
  };

/** on|off (or a boolean). */
export function onOff(label: string, raw: FlagValue): Read<boolean> {
  if (raw === true || raw === "on") return ok(true);
  if (raw === false || raw === "off") return ok(false);
  return bad(label, "on or off", raw);
}

/** Seconds (0 or more) as milliseconds. */
export function graceSeconds(label: string, raw: FlagValue): Read<number> {
  const t = text(raw);
  const n = Number(t);
  return DECIMAL.test(t) && Number.isFinite(n) ? ok(Math.round(n * 1000)) : bad(label, "a number of seconds (0 or more)", raw);
}

export const oneOf =
  <T extends string>(choices: readonly T[]) =>
  (label: string, raw: FlagValue): Read<T> => {
    const t = text(raw);
    return (choices as readonly string[]).includes(t) ? ok(t as T) : bad(label, `one of ${choices.join(", ")}`, raw);
  };

/** A comma-separated list (or a list), trimmed, without empty items. */
export function list(_label: string, raw: FlagValue): Read<string[]> {
  const items = Array.isArray(raw) ? raw : String(raw).split(",");
  return ok(items.map((s) => s.trim()).filter(Boolean));
}

/** A command line: an argv array, or words split on spaces (no quoting: an argument with a space goes in the roster's array). */
export function command(label: string, raw: FlagValue): Read<string[]> {
  const words = Array.isArray(raw) ? raw.map(String) : String(raw).trim().split(/\s+/);
  if (words.length === 0 || words[0] === "") return bad(label, "a command, like 'gemini --acp'", raw);
  if (!Array.isArray(raw) && /['"\\]/.test(String(raw)))
    return bad(label, "words without quotes (put an argument with spaces in agentport.json's acp_command array)", raw);
  return ok(words);
}

/** A repeatable text flag: every occurrence, in order. */
export function texts(_label: string, raw: FlagValue): Read<string[]> {
  return ok((Array.isArray(raw) ? [...raw] : [String(raw)]).filter((s) => s !== ""));
}

/** USD as integer micro-USD, more than 0. */
export function usd(label: string, raw: FlagValue): Read<number> {
  const t = text(raw).replace(/^\$/, "");
  const n = Number(t);
  return DECIMAL.test(t) && n > 0 ? ok(Math.round(n * 1e6)) : bad(label, "a positive amount of USD (like 0.50)", raw);
}
