// Could these UTF-8 bytes hold a secret of a shape the redactor replaces
// (redact.ts, SHAPES)? A superset, checked without decoding: false means no
// shape can match the decoded text, so a big line can be kept byte for byte.
// Pure; one pass, a table lookup a byte, a closer look only at the few bytes
// every shape must contain (its separator or its literal prefix).
//
// Every check is looser than its shape: no \b, no length of the secret's
// tail, and any byte of a non-ASCII character (≥ 0x80) counted as possibly
// whitespace where a shape allows \s and as possibly part of a run where it
// excludes \s. The shapes' /i never folds a non-ASCII character into ASCII,
// so the letters compared are ASCII on both sides.

const COLON = 0x3a;
const EQUALS = 0x3d;
const DASH = 0x2d;
const UNDERSCORE = 0x5f;
const DOT = 0x2e;
const SLASH = 0x2f;
const AT = 0x40;
const BACKSLASH = 0x5c;
const UPPER_B = 0x42;
const UPPER_I = 0x49;
const UPPER_J = 0x4a;

const TRIGGER = new Uint8Array(256);
for (const c of [COLON, EQUALS, DASH, UNDERSCORE, DOT, UPPER_B, UPPER_I, UPPER_J]) TRIGGER[c] = 1;

/** The key=value shape's names (any case), before `["']?\s*` and `:` or `=`. */
const KEY_NAMES = [
  "apikey",
  "api_key",
  "api-key",
  "authorization",
  "accesstoken",
  "access_token",
  "access-token",
  "authtoken",
  "auth_token",
  "auth-token",
  "secret",
  "password",
  "passwd",
].map(ascii);
/** The ENV_NAME=value shape's name ends, before its `:` or `=` (upper case). */
const ENV_ENDS = [
  "KEY",
  "TOKEN",
  "SECRET",
  "PASSWORD",
  "PASSWD",
  "PASS",
  "PASSPHRASE",
  "CREDENTIAL",
  "CREDENTIALS",
  "PWD",
  "PAT",
  "CREDS",
  "SIG",
  "SIGNATURE",
  "SALT",
  "PEM",
  "WEBHOOK",
].map(ascii);
const KEY_LAST = lastBytes(KEY_NAMES);
const ENV_LAST = lastBytes(ENV_ENDS);

/** What may stand right before `:`, `=` or `.` in a shape: a name's last letter (any case), a quote, a backslash, a space, ya29's 9. */
const BEFORE_SEPARATOR = new Uint8Array(256);
for (let c = 0; c < 256; c++) {
  const folded = c >= 0x41 && c <= 0x5a ? c | 0x20 : c;
  if (KEY_LAST[folded] || ENV_LAST[c] || c === 0x22 || c === 0x27 || c === BACKSLASH || c === 0x39 || maybeSpace(c))
    BEFORE_SEPARATOR[c] = 1;
}

function lastBytes(words: Uint8Array[]): Uint8Array {
  const table = new Uint8Array(256);
  for (const w of words) table[w[w.length - 1]!] = 1;
  return table;
}

function ascii(s: string): Uint8Array {
  return Uint8Array.from(s, (ch) => ch.charCodeAt(0));
}

const SK = ascii("sk");
const GLPAT = ascii("glpat");
const XOX = ascii("xox");
const GH = ascii("gh");
const GITHUB_PAT = ascii("github_pat");
const YA29 = ascii("ya29");
const EY = ascii("ey");
const BEARER = ascii("Bearer");
const BASIC = ascii("Basic");
const XOX_KINDS = ascii("abprs");
const GH_KINDS = ascii("pousr");

function isSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}

/** A byte that may be (part of) whitespace as \s sees it. */
function maybeSpace(c: number): boolean {
  return isSpace(c) || c >= 0x80;
}

export function mayHoldShape(bytes: Uint8Array): boolean {
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const c = bytes[i]!;
    if (TRIGGER[c] === 0) continue;
    // The common separators, rejected here on the byte before them (the shapes' last letters, a quote or a space).
    if (
      (c === COLON || c === EQUALS || c === DOT) &&
      i > 0 &&
      BEFORE_SEPARATOR[bytes[i - 1]!] === 0 &&
      !(c === COLON && bytes[i + 1] === SLASH)
    )
      continue;
    if (shapeAt(bytes, i)) return true;
  }
  return false;
}

function shapeAt(b: Uint8Array, i: number): boolean {
  switch (b[i]) {
    case COLON:
      return keyBefore(b, i) || (b[i + 1] === SLASH && b[i + 2] === SLASH && credentialsAfter(b, i + 3));
    case EQUALS:
      return keyBefore(b, i);
    case DASH:
      return endsAt(b, i, SK) || endsAt(b, i, GLPAT) || (endsAt(b, i - 1, XOX) && XOX_KINDS.includes(b[i - 1] ?? 0));
    case UNDERSCORE:
      return (endsAt(b, i - 1, GH) && GH_KINDS.includes(b[i - 1] ?? 0)) || endsAt(b, i, GITHUB_PAT);
    case DOT:
      return endsAt(b, i, YA29);
    case UPPER_J:
      return endsAt(b, i, EY);
    case UPPER_I:
      // AKIA…, ASIA…
      return b[i - 2] === 0x41 && (b[i - 1] === 0x4b || b[i - 1] === 0x53) && b[i + 1] === 0x41;
    case UPPER_B:
      return (
        (startsAt(b, i, BEARER) && maybeSpace(b[i + BEARER.length] ?? 0)) || (startsAt(b, i, BASIC) && maybeSpace(b[i + BASIC.length] ?? 0))
      );
    default:
      return false;
  }
}

/**
 * `name\\?["']?\s*` right before the separator at `sep`, the name ending in
 * a secret's key name (any case) or an environment name's end (upper case).
 */
function keyBefore(b: Uint8Array, sep: number): boolean {
  let j = sep - 1;
  while (j >= 0 && maybeSpace(b[j]!)) j--;
  if (b[j] === 0x22 || b[j] === 0x27) j--;
  if (b[j] === BACKSLASH) j--; // a JSON-escaped quote
  const last = b[j] ?? 0;
  // Most separators end some other name: the names' last letters first. Plain loops: a closure per
  // separator (every JSON key) was garbage enough to grow a run's heap by 10 MiB.
  if (KEY_LAST[last | 0x20]) for (const name of KEY_NAMES) if (endsAtFolded(b, j + 1, name)) return true;
  if (ENV_LAST[last] === 1) for (const end of ENV_ENDS) if (endsAt(b, j + 1, end)) return true;
  return false;
}

/** `user:password@` from `from` on, as in scheme://user:password@host. */
function credentialsAfter(b: Uint8Array, from: number): boolean {
  let j = from;
  while (j < b.length && !isSpace(b[j]!) && b[j] !== SLASH && b[j] !== COLON && b[j] !== AT) j++;
  if (j === from || b[j] !== COLON) return false;
  let k = j + 1;
  while (k < b.length && !isSpace(b[k]!) && b[k] !== SLASH && b[k] !== AT) k++;
  return k > j + 1 && b[k] === AT;
}

/** Do the bytes before `end` (exclusive) spell `word`? */
function endsAt(b: Uint8Array, end: number, word: Uint8Array): boolean {
  const start = end - word.length;
  if (start < 0) return false;
  for (let k = 0; k < word.length; k++) if (b[start + k] !== word[k]) return false;
  return true;
}

/** endsAt, ASCII letters in any case (`word` is lower case). */
function endsAtFolded(b: Uint8Array, end: number, word: Uint8Array): boolean {
  const start = end - word.length;
  if (start < 0) return false;
  for (let k = 0; k < word.length; k++) {
    const c = b[start + k]!;
    if ((c >= 0x41 && c <= 0x5a ? c | 0x20 : c) !== word[k]) return false;
  }
  return true;
}

function startsAt(b: Uint8Array, start: number, word: Uint8Array): boolean {
  if (start + word.length > b.length) return false;
  for (let k = 0; k < word.length; k++) if (b[start + k] !== word[k]) return false;
  return true;
}
