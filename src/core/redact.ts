// The one redactor at the boundary: every string that leaves agentport
// (stdout, stderr, progress, the ledger, the verdict) passes through it. Pure.
//
// By value: the values of the real environment whose names look secret, and
// every value read from an env file (6 characters or more), wherever they
// appear. By shape: the common key and token formats, credentials in a URL,
// Bearer/Basic headers, `key=value` pairs whose key names a secret.
//
// The agent's own answer (the final text, the envelope) is redacted by value
// only: a shape rule would also eat a commit hash or an example in the answer.
// Diagnostics (failures, fault evidence) additionally lose long key-like runs.
import type { Verdict } from "./verdict.ts";

export const REDACTED = "[redacted]";
/** Shorter values are too likely to be ordinary words to be replaced everywhere. */
export const MIN_SECRET_CHARS = 6;

type Replacement = string | ((match: string, ...groups: string[]) => string);

const SHAPES: readonly [RegExp, Replacement][] = [
  // key: value, key=value, "apiKey":"value", Authorization: Bearer value
  [
    /((?:x-)?api[_-]?key|authorization|access[_-]?token|auth[_-]?token|secret|password|passwd)(["']?\s*[:=]\s*["']?)(?:(?:Bearer|Basic)\s+)?[^\s"',;)]+/gi,
    (_m, key, sep) => `${key}${sep}${REDACTED}`,
  ],
  // An environment dump: AWS_SECRET_ACCESS_KEY=…, GITHUB_TOKEN=…
  [/\b([A-Z][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?))=(?!\[redacted\])[^\s"',;]+/g, (_m, key) => `${key}=${REDACTED}`],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g, (_m, scheme) => `${scheme} ${REDACTED}`],
  // scheme://user:password@host keeps the user and the host.
  [/\b([a-z][a-z0-9+.-]*:\/\/)([^\s/:@]+):([^\s/@]+)@/gi, (_m, scheme, user) => `${scheme}${user}:${REDACTED}@`],
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

// Names whose values are secrets: *KEY*, *TOKEN*, *SECRET*, *PASSWORD*, *PASS, *CREDENTIAL*, *AUTH*, *PRIVATE*, *DSN*, DATABASE_URL.
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS$|CREDENTIAL|AUTH(?!OR)|PRIVATE|DSN|COOKIE|^DATABASE_URL$/i;
// ...but not those that name a place: SSH_AUTH_SOCK, GOOGLE_APPLICATION_CREDENTIALS_FILE, *_KEY_PATH.
const PLACE_NAME = /(?:_SOCK|_PATH|_DIR|_FILE|_HOME)$|^XAUTHORITY$/i;

/** Does this variable's name say its value is a secret? */
export function secretName(name: string): boolean {
  return SECRET_NAME.test(name) && !PLACE_NAME.test(name);
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function replaceAll(text: string, rules: readonly (readonly [RegExp, Replacement])[]): string {
  let out = text;
  for (const [pattern, replacement] of rules) {
    out = typeof replacement === "string" ? out.replace(pattern, replacement) : out.replace(pattern, replacement as (m: string, ...g: string[]) => string);
  }
  return out;
}

export class Redactor {
  private readonly known = new Set<string>();
  private pattern: RegExp | null = null;
  private encoded: Uint8Array[] | null = null;

  /** Secret values to replace wherever they appear (shorter than 6 characters: ignored). */
  addValues(values: Iterable<string>): void {
    for (const value of values) {
      const v = value.trim();
      if (v.length < MIN_SECRET_CHARS) continue;
      this.known.add(v);
      // The same value inside JSON text, escaped.
      const json = JSON.stringify(v).slice(1, -1);
      if (json !== v) this.known.add(json);
    }
    const sorted = [...this.known].sort((a, b) => b.length - a.length);
    this.pattern = sorted.length === 0 ? null : new RegExp(sorted.map(escape).join("|"), "g");
    this.encoded = null;
  }

  /** The known values as UTF-8, to look for in bytes: text holds a value exactly where its UTF-8 holds these bytes. */
  valueBytes(): readonly Uint8Array[] {
    if (this.encoded === null) {
      const encoder = new TextEncoder();
      this.encoded = [...this.known].map((v) => encoder.encode(v));
    }
    return this.encoded;
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

  /** How many values it knows (for --verbose and the tests). */
  get size(): number {
    return this.known.size;
  }

  /** Known secret values replaced; nothing else touched. */
  values(text: string): string {
    return this.pattern === null ? text : text.replace(this.pattern, REDACTED);
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
