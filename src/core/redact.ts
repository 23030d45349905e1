// The one redactor at the boundary: every string that leaves agentport
// (stdout, stderr, progress, the ledger, the verdict) passes through it. Pure.
//
// By value: the values of the real environment whose names look secret, and
// every value read from an env file (6 characters or more), wherever they
// appear, also in the forms they take when encoded (secret-forms.ts). By
// shape: the common key and token formats, credentials in a URL,
// Bearer/Basic headers, `key=value` pairs whose key names a secret.
//
// The agent's own answer (the final text, the envelope) is redacted by value
// only: a shape rule would also eat a commit hash or an example in the answer.
// Diagnostics (failures, fault evidence) additionally lose long key-like runs.
import type { Verdict } from "./verdict.ts";
import { secretForms } from "./secret-forms.ts";
import { codeUnits, LiteralScan } from "./literal-scan.ts";

export const REDACTED = "[redacted]";
/** Shorter values are too likely to be ordinary words to be replaced everywhere. */
export const MIN_SECRET_CHARS = 6;

type Replacement = string | ((match: string, ...groups: string[]) => string);

// A key whose value is a secret, and what stands between them.
const SECRET_KEY = String.raw`(?:x-)?api[_-]?key|authorization|access[_-]?token|auth[_-]?token|secret|password|passwd`;
const KEY_SEPARATOR = String.raw`\\?["']?\s*[:=]\s*\\?["']?`;
// (the ends of secretName's words; the short ones after an underscore)
const ENV_SECRET_NAME = String.raw`[A-Z][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PASSPHRASE|CREDENTIALS?|_(?:PWD|PAT|CREDS|SIG|SIGNATURE|SALT|PEM|WEBHOOK))`;
// A value runs to a space, a quote, a delimiter of a list or a query, or a
// `/` or `%20` that starts the next key=value pair: pairs run together
// (a=1&password=2) are redacted one by one, the first one's redaction never
// eating the second key (and so leaving its value).
const SECRET_VALUE = String.raw`(?:(?!(?:/|%20)(?:${SECRET_KEY}|${ENV_SECRET_NAME})${KEY_SEPARATOR})[^\s"',;)&|\\}\]<>])+`;

// A value the known values already replaced is left as it is.
const NOT_REDACTED = String.raw`(?!\[redacted\])`;

const SHAPES: readonly [RegExp, Replacement][] = [
  // key: value, key=value, "apiKey":"value", Authorization: Bearer value (JSON-escaped quotes too)
  [
    new RegExp(`(${SECRET_KEY})(${KEY_SEPARATOR})(?:(?:Bearer|Basic)\\s+)?${NOT_REDACTED}${SECRET_VALUE}`, "gi"),
    (_m, key, sep) => `${key}${sep}${REDACTED}`,
  ],
  // An environment dump or a config: AWS_SECRET_ACCESS_KEY=…, GITHUB_TOKEN: …, also inside JSON text (after an escaped newline) and a URL (after %20)
  [
    new RegExp(`(?:\\b|(?<=\\\\[nrt]|%20))(${ENV_SECRET_NAME})(${KEY_SEPARATOR})${NOT_REDACTED}${SECRET_VALUE}`, "g"),
    (_m, key, sep) => `${key}${sep}${REDACTED}`,
  ],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g, (_m, scheme) => `${scheme} ${REDACTED}`],
  // scheme://user:password@host keeps the user and the host; the password runs to the authority's last `@` (p@ss in u:p@ss@host).
  [/\b([a-z][a-z0-9+.-]*:\/\/)([^\s/:@]+):([^\s/?#]+)@/gi, (_m, scheme, user) => `${scheme}${user}:${REDACTED}@`],
  [/\bsk-[A-Za-z0-9_-]{6,}/g, REDACTED],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, REDACTED],
  [/\bgh[pousr]_[A-Za-z0-9]{16,}/g, REDACTED],
  [/\bgithub_pat_[A-Za-z0-9_]{16,}/g, REDACTED],
  [/\bglpat-[A-Za-z0-9_-]{16,}/g, REDACTED],
  [/\bxox[abprs]-[A-Za-z0-9-]{8,}/g, REDACTED],
  [/\bya29\.[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, REDACTED],
];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Long base64/hex-looking runs with a digit and a letter (not a UUID, not an ENV_NAME): diagnostics only.
const LONG_RUN: readonly [RegExp, Replacement] = [
  /[A-Za-z0-9+_-]{32,}={0,2}/g,
  (m) => (UUID.test(m) || !/\d/.test(m) || !/[A-Za-z]/.test(m) ? m : REDACTED),
];

// A name says its value is a secret by one of its words (split at `_`, `-`, `.`),
// or by a word's end (APIKEY, DBPASS, BASICAUTH)...
const SECRET_WORDS = new Set([
  "PWD",
  "PAT",
  "CREDS",
  "CREDENTIAL",
  "CREDENTIALS",
  "PRIVATE",
  "DSN",
  "COOKIE",
  "WEBHOOK",
  "SIG",
  "SIGNATURE",
  "SALT",
  "PEM",
  "AUTHORIZATION",
]);
const SECRET_END = /(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PASSPHRASE|AUTH)$/;
// ...unless its last word names a place (SSH_AUTH_SOCK, GOOGLE_APPLICATION_CREDENTIALS_FILE, SSH_KEY_PATH),
// or it is the working directory (PWD).
const PLACE_WORDS = new Set(["SOCK", "SOCKET", "PATH", "DIR", "FILE", "HOME"]);
const NOT_SECRET = new Set(["PWD"]);
const ALWAYS_SECRET = new Set(["DATABASE_URL"]);

/** Does this variable's name say its value is a secret? (test/redaction-encodings.test.ts holds the table.) */
export function secretName(name: string): boolean {
  const upper = name.toUpperCase();
  if (ALWAYS_SECRET.has(upper)) return true;
  if (NOT_SECRET.has(upper)) return false;
  const words = upper.split(/[_.-]+/).filter(Boolean);
  if (words.length === 0 || PLACE_WORDS.has(words[words.length - 1]!)) return false;
  return words.some((w) => SECRET_WORDS.has(w) || SECRET_END.test(w));
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function replaceAll(text: string, rules: readonly (readonly [RegExp, Replacement])[]): string {
  let out = text;
  for (const [pattern, replacement] of rules) {
    out =
      typeof replacement === "string"
        ? out.replace(pattern, replacement)
        : out.replace(pattern, replacement as (m: string, ...g: string[]) => string);
  }
  return out;
}

export class Redactor {
  private readonly known = new Set<string>();
  /** Each known value's forms (secret-forms.ts), the values themselves among them. */
  private readonly forms = new Set<string>();
  private pattern: RegExp | null = null;
  private longest = 0;
  /** Whether a text holds any form at all: one pass that mostly skips (literal-scan.ts); the pattern replaces only then. */
  private scan: LiteralScan | null = null;
  private byteScan: LiteralScan | null | undefined = undefined;

  /** Secret values to replace wherever they appear, in every form they commonly take (shorter than 6 characters: ignored). */
  addValues(values: Iterable<string>): void {
    for (const value of values) {
      const v = value.trim();
      if (v.length < MIN_SECRET_CHARS || this.known.has(v)) continue;
      this.known.add(v);
      for (const form of secretForms(v, MIN_SECRET_CHARS)) this.forms.add(form);
    }
    const sorted = [...this.forms].sort((a, b) => b.length - a.length);
    this.pattern = sorted.length === 0 ? null : new RegExp(sorted.map(escapeRegExp).join("|"), "g");
    this.longest = sorted[0]?.length ?? 0;
    this.scan = sorted.length === 0 ? null : new LiteralScan(sorted.map(codeUnits));
    this.byteScan = undefined;
  }

  /** Do these UTF-8 bytes hold a known value or one of its forms? (They do exactly where their text does.) */
  holdsValue(bytes: Uint8Array): boolean {
    if (this.byteScan === undefined) {
      const encoder = new TextEncoder();
      this.byteScan = this.forms.size === 0 ? null : new LiteralScan([...this.forms].map((f) => [...encoder.encode(f)]));
    }
    return this.byteScan !== null && this.byteScan.inBytes(bytes);
  }

  /**
   * A known form that runs from the end of `before` into the start of `after`
   * (a line break between them, left out of both): where it starts in
   * `before` and where it ends in `after`. Null when none does.
   */
  acrossBreak(before: string, after: string): { start: number; end: number } | null {
    if (this.pattern === null) return null;
    const tail = Math.min(before.length, this.longest - 1);
    const joined = before.slice(before.length - tail) + after.slice(0, this.longest - 1);
    for (const m of joined.matchAll(this.pattern)) {
      if (m.index < tail && m.index + m[0].length > tail)
        return { start: before.length - tail + m.index, end: m.index + m[0].length - tail };
    }
    return null;
  }

  /** The values of `env` whose names look secret (an absolute path is a place, not a secret). */
  addEnvironment(env: Record<string, string | undefined>): void {
    const values: string[] = [];
    for (const [name, value] of Object.entries(env)) {
      if (value === undefined || !secretName(name) || /^\/\S*$/.test(value)) continue;
      values.push(value);
    }
    this.addValues(values);
  }

  /** How many values it knows, not counting their forms (for --verbose and the tests). */
  get size(): number {
    return this.known.size;
  }

  /** Known secret values replaced; nothing else touched. */
  values(text: string): string {
    return this.pattern === null || !this.scan!.inString(text) ? text : text.replace(this.pattern, REDACTED);
  }

  /** Known values and every secret shape replaced: stderr, progress, the ledger, summaries. */
  text(text: string): string {
    return replaceAll(this.values(text), SHAPES);
  }

  /** `text`, and long key-like runs too: failures and fault evidence. */
  diagnostic(text: string): string {
    return replaceAll(this.text(text), [LONG_RUN]);
  }

  /** Every string of a JSON-like value through `values` (an envelope). */
  deepValues<T>(value: T): T {
    if (typeof value === "string") return this.values(value) as T;
    if (Array.isArray(value)) return value.map((v) => this.deepValues(v)) as T;
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.deepValues(v)])) as T;
    }
    return value;
  }

  /** A verdict as it may leave agentport: diagnostics by value and shape, the agent's answer by value. */
  verdict(v: Verdict): Verdict {
    const summary: Verdict["summary"] = {};
    for (const [key, value] of Object.entries(v.summary)) summary[key] = typeof value === "string" ? this.text(value) : value;
    return {
      ...v,
      text: v.text === null ? null : this.values(v.text),
      envelope: this.deepValues(v.envelope),
      failure: v.failure === null ? null : { ...v.failure, message: this.diagnostic(v.failure.message) },
      fault: v.fault === null ? null : { ...v.fault, evidence: this.diagnostic(v.fault.evidence) },
      refused: v.refused.map((r) => ({ ...r, subject: this.text(r.subject) })),
      summary,
    };
  }
}

/**
 * The process's redactor. The CLI adds the environment's secrets at start and
 * each env file's values as it reads them; everything printed or stored goes through it.
 */
export const secrets = new Redactor();

export const redact = (text: string): string => secrets.text(text);
