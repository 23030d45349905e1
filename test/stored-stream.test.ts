// Attacks on stream.jsonl's fast path (lines kept as they came when a byte
// check finds nothing to redact): secrets by value and by shape in short
// lines, and across the pipe's read boundaries deep inside a 3 MiB line, written by
// a real agent process (a shell script that cats the stream) through the
// compiled binary. None reaches the file; the lines stay JSON; a big line
// with nothing to redact is kept exactly.
import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, tempDir } from "./helpers.ts";

const dirs: string[] = [];
afterAll(() => {
  if (!process.env.KEEP) for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const tag = crypto.randomUUID().replace(/-/g, "").slice(0, 12);
const VALUE = `cnry-value-${tag}`;
/** Each secret, and the part of it that must not be kept. */
const SECRETS = [
  { text: VALUE, core: VALUE },
  { text: `ghp_Cnry${tag}abcdefgh`, core: `Cnry${tag}abcdefgh` },
  { text: `Authorization: Bearer cnrybearer${tag}`, core: `cnrybearer${tag}` },
  { text: `password\u00a0= cnrypass${tag}`, core: `cnrypass${tag}` },
  { text: `postgres://admin:cnryurl${tag}@db.invalid/app`, core: `cnryurl${tag}` },
];

const EMITTER = `#!/bin/sh
for a in "$@"; do case "$a" in --version|-v) echo "2.1.197 (Claude Code)"; exit 0;; --help) echo "usage: claude"; exit 0;; esac; done
cat > /dev/null &
exec cat "$EMIT_FILE"
`;

const record = (content: string) =>
  JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content }] } });

/** Short lines with a secret each, then a 3 MiB tool result whose line has each secret straddling one of `boundaries` (offsets in the file). */
function stream(boundaries: number[], lead: string): { text: string; plainLine: string; plainShort: string } {
  const init = JSON.stringify({
    type: "system",
    subtype: "init",
    session_id: "11111111-2222-3333-4444-555555555555",
    model: "claude-sonnet-4-5",
    tools: [],
  });
  const plainLine = record("plain line of code; ".repeat(20_000));
  const plainShort = record("a short plain result: token, key = 1, https://example.invalid/x");
  const shortLines = SECRETS.map((s) => `${record(`short: ${s.text} end`)}\n`).join("");
  const head = `${init}\n${shortLines}${plainShort}\n${plainLine}\n${lead}`;
  const prefix = `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"`;
  let content = "";
  const at = head.length + prefix.length;
  for (const [i, boundary] of boundaries.entries()) {
    // Spaced: a shape's value runs to the next space, and would swallow the next secret's key name (the redactor's own limit).
    const secret = ` ${SECRETS[i % SECRETS.length]!.text} `;
    const start = boundary - at - Math.floor(secret.length / 2);
    content += "x".repeat(Math.max(0, start - content.length)) + secret;
  }
  content += "y".repeat(3 * 1024 * 1024 - content.length);
  const result = JSON.stringify({
    type: "result",
    subtype: "success",
    is_error: false,
    result: "Done.",
    session_id: "11111111-2222-3333-4444-555555555555",
    num_turns: 1,
    usage: { input_tokens: 1, output_tokens: 1 },
  });
  return { text: `${head}${prefix}${content}"}]}}\n${result}\n`, plainLine, plainShort };
}

test.each([
  ["the pipe's and the framer's boundaries", ""],
  ["the same, shifted by a multi-byte character", "é"],
])("secrets across %s never reach stream.jsonl", async (_name, shift) => {
  const root = tempDir("agentport-stored-");
  dirs.push(root);
  const home = join(root, "state");
  mkdirSync(join(root, "home"));
  const fake = join(root, "fake-claude");
  writeFileSync(fake, EMITTER);
  chmodSync(fake, 0o755);
  const boundaries = [4096, 65536, 1 << 20, (1 << 20) + 65536, 2 << 20, 3 << 20];
  // The lead shifts the big line against the boundaries: a multi-byte character, or nothing (a JSON space).
  const { text, plainLine, plainShort } = stream(
    boundaries,
    shift === "" ? "" : JSON.stringify({ type: "system", subtype: "status", note: shift }) + "\n",
  );
  const file = join(root, "stream.jsonl");
  writeFileSync(file, text);
  const proc = Bun.spawn([BIN, "run", "--agent", "claude", "--claude-bin", fake, "--progress", "off", "--json", "go"], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: join(root, "home"),
      AGENTPORT_HOME: home,
      AGENTPORT_CONFIG: "",
      NO_COLOR: "1",
      EMIT_FILE: file,
      AGENTPORT_CANARY_TOKEN: VALUE,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ stdout: stdout.slice(0, 300), stderr: stderr.slice(0, 300) }).toMatchObject({
    stdout: expect.stringContaining('"status":"completed"'),
  });
  const kept = (readdirSync(home, { recursive: true }) as string[]).filter((f) => f.endsWith("stream.jsonl"));
  expect(kept.length).toBe(1);
  const stored = readFileSync(join(home, kept[0]!), "utf8");
  for (const s of SECRETS) expect({ core: s.core, found: stored.includes(s.core) }).toEqual({ core: s.core, found: false });
  const lines = stored.split("\n").filter((l) => l !== "");
  expect(lines.length).toBe(text.split("\n").filter((l) => l !== "").length);
  for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
  // The big line with secrets is the redacted record, not a marker; the plain one is kept as it came.
  expect(lines.some((l) => l.length > 3 * 1024 * 1024 && l.includes("[redacted]"))).toBe(true);
  expect(lines).toContain(plainLine);
  expect(lines).toContain(plainShort);
  expect(lines.filter((l) => l.includes("short: ") && l.includes("[redacted]")).length).toBe(SECRETS.length);
});
