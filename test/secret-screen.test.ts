// The byte screen stream.jsonl trusts to keep a big line undecoded: wherever
// the redactor's shapes would change a text, the screen must say so of its
// UTF-8 bytes. Checked on every line of every fixture, on generated near
// misses (each shape's pieces in random case, with Unicode spaces, escapes and
// non-ASCII letters around them) and on the shapes' own examples.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Redactor } from "../src/core/redact.ts";
import { mayHoldShape } from "../src/core/secret-screen.ts";
import { ROOT } from "./helpers.ts";

const shapes = new Redactor(); // no values: shapes only
const utf8 = (s: string) => new TextEncoder().encode(s);
const changes = (s: string) => shapes.text(s) !== s;

const EXAMPLES = [
  'curl -H "Authorization: Bearer abcdefghijklmnop1234"',
  '{"apiKey":"abcdef123456"}',
  "x-api-key = value123",
  "PASSWORD\u00a0:\u3000hunter22",
  "passwd\u2028=x",
  '"access-token"  :  "v"',
  "AWS_SECRET_ACCESS_KEY=abc/def",
  "GITHUB_TOKEN=ghx",
  "MY_PASS=x",
  "DB_CREDENTIALS=x",
  "MYSQL_PWD=x",
  "GH_PAT: x",
  "DEPLOY_CREDS=x",
  "API_SIG=x",
  "SIGNING_SALT=x",
  "CERT_PEM=x",
  "SLACK_WEBHOOK=x",
  "GPG_PASSPHRASE=x",
  "Basic dXNlcjpwYXNzd29yZA==",
  "Bearer\u00a0abcdefgh12345",
  "postgres://user:pa55@db.invalid/x",
  "https://ünï:cödé@host",
  "sk-abcdef123",
  "AKIAABCDEFGHIJKLMNOP",
  "ASIAABCDEFGHIJKLMNOP",
  "ghp_abcdefghijklmnop1234",
  "github_pat_abcdefghijklmnop1234",
  "glpat-abcdefghijklmnop12",
  "xoxb-12345678-abc",
  "ya29.abcdefgh123",
  "eyJhbGciOi.eyJzdWIiOi.sig",
];

test("every shape's example is one the redactor changes and the screen flags", () => {
  for (const example of EXAMPLES) {
    expect({ example, changes: changes(example) }).toEqual({ example, changes: true });
    expect({ example, flagged: mayHoldShape(utf8(example)) }).toEqual({ example, flagged: true });
  }
});

test("ordinary code and prose with a token, a key, a URL and separators pass the screen", () => {
  const plain =
    'function f(token: string, key = 1) { return fetch("https://example.invalid/a.b", { cache: "no-store" }); } // snake_case-ok. I Basically';
  expect(changes(plain)).toBe(false);
  expect(mayHoldShape(utf8(plain))).toBe(false);
});

// A seeded generator of near misses: the shapes' pieces, shuffled.
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const PIECES = [
  "api",
  "key",
  "_",
  "-",
  "x-",
  "auth",
  "token",
  "access",
  "authorization",
  "secret",
  "password",
  "passwd",
  "pass",
  "credential",
  "credentials",
  "KEY",
  "TOKEN",
  "SECRET",
  "PASS",
  "PASSWD",
  "CREDENTIALS",
  "PWD",
  "_PAT",
  "_SIG",
  "SALT",
  "_PEM",
  "WEBHOOK",
  "MY_",
  "=",
  ":",
  '"',
  "'",
  '\\"',
  " ",
  "\t",
  "\u00a0",
  "\u2028",
  "\u3000",
  "\ufeff",
  "é",
  "日本",
  "😀",
  "Bearer",
  "Basic",
  "://",
  "http",
  "@",
  "/",
  "user",
  "sk",
  "AKIA",
  "ASIA",
  "ABCDEFGHIJKLMNOP",
  "gh",
  "p",
  "o",
  "u",
  "s",
  "r",
  "github",
  "pat",
  "glpat",
  "xox",
  "b",
  "ya29",
  ".",
  "ey",
  "J",
  "eyJ",
  "abcdefgh",
  "12345678",
  "[redacted]",
  ",",
  ";",
  ")",
  "\\n",
  "\n",
  "\\",
  "&",
  "|",
  "%20",
  "}",
  "]",
  "<",
  ">",
];

test("on 80,000 generated near misses, the screen flags every text the redactor changes", () => {
  const next = rng(16);
  let changed = 0;
  let passed = 0;
  const missed: string[] = [];
  for (let n = 0; n < 80_000; n++) {
    let text = "";
    const count = 1 + Math.floor(next() * 12);
    for (let k = 0; k < count; k++) {
      const piece = PIECES[Math.floor(next() * PIECES.length)]!;
      text += next() < 0.3 ? piece.toUpperCase() : next() < 0.15 ? piece[0]!.toUpperCase() + piece.slice(1) : piece;
    }
    if (changes(text)) {
      changed++;
      if (!mayHoldShape(utf8(text))) missed.push(text);
    } else if (!mayHoldShape(utf8(text))) passed++;
  }
  expect(missed).toEqual([]);
  // Both sides were exercised: texts the shapes change, and texts the screen lets through.
  expect(changed).toBeGreaterThan(1_000);
  expect(passed).toBeGreaterThan(2_000);
});

describe("every fixture line", () => {
  const dirs = [join(ROOT, "test", "fixtures"), "/work/shared/fixtures"].filter((d) => existsSync(d));
  const files = dirs.flatMap((d) =>
    (readdirSync(d, { recursive: true }) as string[]).filter((f) => f.endsWith(".jsonl")).map((f) => join(d, f)),
  );
  test("there are fixtures", () => expect(files.length).toBeGreaterThan(10));
  test("a line the redactor changes is one the screen flags", () => {
    const missed: string[] = [];
    for (const file of files) {
      for (const line of readFileSync(file, "utf8").split("\n"))
        if (changes(line) && !mayHoldShape(utf8(line))) missed.push(`${file}: ${line.slice(0, 120)}`);
    }
    expect(missed).toEqual([]);
  });
});
