// Bad input: every refusal is one clear line on stderr, nothing on stdout,
// the documented exit code (README "Exit codes": 2 usage or input error,
// 3 refused before calling, 5 environment fault), and nothing written: the
// state folder ($AGENTPORT_HOME) is never created and $HOME stays empty.
// The compiled binary, with a private, empty environment.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { BIN, tempDir } from "./helpers.ts";

let root: string;
let files: string;
let fake: string;
const boxes: string[] = [];

beforeAll(() => {
  root = tempDir("agentport-bad-input-");
  files = join(root, "files");
  mkdirSync(join(files, "a-folder"), { recursive: true });
  fake = join(root, "fake-claude");
  symlinkSync(BIN, fake);
  writeFileSync(join(files, "truncated.json"), '{"type":');
  writeFileSync(join(files, "not-a-schema.json"), '{"type":"nonsense-type"}');
  writeFileSync(join(files, "array.json"), "[1,2]");
  writeFileSync(join(files, "not-executable"), "#!/bin/sh\nexit 0\n");
  chmodSync(join(files, "not-executable"), 0o644);
  writeFileSync(join(files, "unreadable.json"), "{}");
  chmodSync(join(files, "unreadable.json"), 0o000);
});

afterAll(() => {
  for (const dir of [root, ...boxes]) rmSync(dir, { recursive: true, force: true });
});

interface Case {
  name: string;
  args: (f: { files: string; fake: string }) => string[];
  exit: number;
  line: RegExp;
  stdin?: string;
  env?: Record<string, string>;
  /** Only where the case can be set up (root reads a chmod-000 file). */
  when?: () => boolean;
}

const run = (f: { fake: string }, ...rest: string[]) => ["run", "--agent", "claude", "--claude-bin", f.fake, ...rest];

const CASES: Case[] = [
  // the agent and its binary
  {
    name: "an unknown agent",
    args: () => ["run", "--agent", "nope", "hi"],
    exit: 2,
    line: /--agent \(nope\)\. Expected one of: claude, pi/,
  },
  { name: "replay: an unknown agent", args: () => ["replay", "--agent", "nope", "x.jsonl"], exit: 2, line: /--agent \(nope\)/ },
  {
    name: "a missing binary (flag)",
    args: () => ["run", "--agent", "claude", "--claude-bin", "/nonexistent/claude", "hi"],
    exit: 5,
    line: /claude: \/nonexistent\/claude does not exist or is not executable/,
  },
  {
    name: "a missing binary (environment variable)",
    args: () => ["run", "--agent", "claude", "hi"],
    env: { AGENTPORT_CLAUDE_BIN: "/nonexistent/claude" },
    exit: 5,
    line: /\/nonexistent\/claude does not exist or is not executable/,
  },
  {
    name: "a missing binary (not on PATH)",
    args: () => ["run", "--agent", "claude", "hi"],
    exit: 5,
    line: /claude: not found on PATH; install it or point AGENTPORT_CLAUDE_BIN/,
  },
  {
    name: "a missing pi binary",
    args: () => ["run", "--agent", "pi", "--pi-bin", "/nonexistent/pi", "hi"],
    exit: 5,
    line: /pi: \/nonexistent\/pi does not exist or is not executable/,
  },
  {
    name: "a binary that is not executable",
    args: (f) => ["run", "--agent", "claude", "--claude-bin", join(f.files, "not-executable"), "hi"],
    exit: 5,
    line: /not-executable does not exist or is not executable/,
  },
  {
    name: "a binary that is a folder",
    args: (f) => ["run", "--agent", "claude", "--claude-bin", join(f.files, "a-folder"), "hi"],
    exit: 5,
    line: /a-folder is not a file/,
  },
  // the schema
  {
    name: "a missing schema",
    args: (f) => run(f, "--schema", "/nonexistent/schema.json", "hi"),
    exit: 2,
    line: /--schema \/nonexistent\/schema\.json: no such file/,
  },
  {
    name: "an unreadable schema (a folder)",
    args: (f) => run(f, "--schema", join(f.files, "a-folder"), "hi"),
    exit: 2,
    line: /--schema .*a-folder: a folder, not a file/,
  },
  {
    name: "an unreadable schema (mode 000)",
    args: (f) => run(f, "--schema", join(f.files, "unreadable.json"), "hi"),
    exit: 2,
    line: /--schema .*unreadable\.json: .*(EACCES|permission)/i,
    when: () => process.getuid?.() !== 0,
  },
  {
    name: "a schema that is not JSON",
    args: (f) => run(f, "--schema", join(f.files, "truncated.json"), "hi"),
    exit: 2,
    line: /--schema .*truncated\.json: not JSON/,
  },
  {
    name: "a schema zod cannot use",
    args: (f) => run(f, "--schema", join(f.files, "not-a-schema.json"), "hi"),
    exit: 2,
    line: /--schema .*not-a-schema\.json: the schema cannot be used/,
  },
  {
    name: "a schema that is no object",
    args: (f) => run(f, "--schema", join(f.files, "array.json"), "hi"),
    exit: 2,
    line: /--schema .*array\.json: the schema is not a JSON object/,
  },
  // the folder and the prompt
  {
    name: "a non-existent cwd",
    args: (f) => run(f, "--cwd", "/nonexistent/folder", "hi"),
    exit: 2,
    line: /--cwd \/nonexistent\/folder: no such folder/,
  },
  {
    name: "a cwd that is a file",
    args: (f) => run(f, "--cwd", join(f.files, "array.json"), "hi"),
    exit: 2,
    line: /--cwd .*array\.json: no such folder/,
  },
  { name: "an empty prompt (argument)", args: (f) => run(f, "   "), exit: 2, line: /the prompt is empty/ },
  { name: "an empty prompt (stdin)", args: (f) => run(f, "-"), stdin: "\n \n", exit: 2, line: /the prompt is empty/ },
  // options
  { name: "an unknown option", args: (f) => run(f, "--timout", "5", "hi"), exit: 2, line: /unknown option --timout for "run"/ },
  { name: "an option without its value", args: (f) => run(f, "--timeout"), exit: 2, line: /--timeout needs a value/ },
  {
    name: "a negative timeout",
    args: (f) => run(f, "--timeout", "-1", "hi"),
    exit: 2,
    line: /--timeout must be a number of seconds \(0 for none\), got "-1"/,
  },
  {
    name: "a zero line bound",
    args: (f) => run(f, "--max-line-bytes", "0", "hi"),
    exit: 2,
    line: /--max-line-bytes must be a positive integer, got "0"/,
  },
  {
    name: "a budget that is no number",
    args: (f) => run(f, "--max-tokens", "lots", "hi"),
    exit: 2,
    line: /--max-tokens must be a positive integer, got "lots"/,
  },
  { name: "an unknown budget mode", args: (f) => run(f, "--max-tokens", "100", "--budget", "maybe", "hi"), exit: 2, line: /--budget/ },
  {
    name: "an unknown loop setting",
    args: (f) => run(f, "--loop", "maybe", "hi"),
    exit: 2,
    line: /--loop must be one of on, off, got "maybe"/,
  },
  {
    name: "a loop repeat below 2",
    args: (f) => run(f, "--loop-repeat", "1", "hi"),
    exit: 2,
    line: /--loop-repeat must be a whole number from 2 to 1000, got "1"/,
  },
  // other commands
  { name: "an unknown command", args: () => ["frobnicate"], exit: 2, line: /unknown command "frobnicate"/ },
  {
    name: "replay: a missing file",
    args: () => ["replay", "/nonexistent/stream.jsonl"],
    exit: 2,
    line: /\/nonexistent\/stream\.jsonl: no such file/,
  },
];

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
  state: string;
  home: string;
}

/** The binary in a private environment: no PATH entry for any agent, a fresh empty $HOME, a state folder that does not exist yet. */
async function refuse(args: string[], opts: { stdin?: string; env?: Record<string, string>; state?: string } = {}): Promise<Ran> {
  const box = tempDir("agentport-refusal-");
  boxes.push(box);
  const home = join(box, "home");
  mkdirSync(home);
  const state = opts.state ?? join(box, "state");
  const proc = Bun.spawn([BIN, ...args], {
    cwd: box,
    env: { PATH: "/usr/bin:/bin", HOME: home, NO_COLOR: "1", AGENTPORT_HOME: state, AGENTPORT_CONFIG: "", ...opts.env },
    stdin: opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr, state, home };
}

const nonEmptyLines = (s: string) => s.split("\n").filter((l) => l.trim() !== "");

function expectRefusal(r: Ran, exit: number, line: RegExp): void {
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: exit, stdout: "" });
  const lines = nonEmptyLines(r.stderr);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(line);
  expect(lines[0]).toStartWith("[error] ");
  expect(lines[0]!.length).toBeLessThan(300);
  // Nothing written: no state folder, and $HOME as empty as it was.
  expect(existsSync(r.state)).toBe(false);
  expect(readdirSync(r.home)).toEqual([]);
}

describe("bad input: one clear line, the documented exit code, nothing written", () => {
  for (const c of CASES) {
    const t = c.when === undefined || c.when() ? test : test.skip;
    t(`${c.name} → exit ${c.exit}`, async () => {
      const r = await refuse(c.args({ files, fake }), { stdin: c.stdin, env: c.env });
      expectRefusal(r, c.exit, c.line);
    });
  }

  test("resume from another folder than the session's birth folder → exit 3, the ledger unchanged, no run folder", async () => {
    const box = tempDir("agentport-birth-");
    boxes.push(box);
    const born = join(box, "born");
    const other = join(box, "other");
    mkdirSync(born);
    mkdirSync(other);
    const state = join(box, "state");
    const env = {
      PATH: "/usr/bin:/bin",
      HOME: box,
      NO_COLOR: "1",
      AGENTPORT_HOME: state,
      AGENTPORT_CONFIG: "",
      AGENTPORT_FAKE_SCENARIO: "text",
    };
    const first = Bun.spawnSync([BIN, "run", "--agent", "claude", "--claude-bin", fake, "--json", "--progress", "off", "hi"], {
      cwd: born,
      env,
    });
    expect(first.exitCode).toBe(0);
    const id = JSON.parse(first.stdout.toString()).session_id as string;
    const counts = () => {
      const db = new Database(join(state, "ledger.sqlite"), { readonly: true });
      try {
        return db
          .query<{ s: number; p: number }, []>("SELECT (SELECT count(*) FROM sessions) AS s, (SELECT count(*) FROM phases) AS p")
          .get();
      } finally {
        db.close();
      }
    };
    const before = counts();
    const runsBefore = readdirSync(join(state, "runs")).sort();
    const r = await refuse(["resume", id.slice(0, 8), "--claude-bin", fake, "again"], { state, env: { HOME: box } });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe("");
    const lines = nonEmptyLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/refused: session .* was born in .*born, not in /);
    expect(counts()).toEqual(before);
    expect(readdirSync(join(state, "runs")).sort()).toEqual(runsBefore);
  });

  // The line names where the binary came from: the environment variable, not the flag it is folded into.
  test("bad-input-2: a missing binary from $AGENTPORT_CLAUDE_BIN is said to come from it", async () => {
    const r = await refuse(["run", "--agent", "claude", "hi"], { env: { AGENTPORT_CLAUDE_BIN: "/nonexistent/claude" } });
    expectRefusal(r, 5, /\/nonexistent\/claude does not exist or is not executable \(from AGENTPORT_CLAUDE_BIN\)/);
  });

  // A refusal writes nothing: a missing ledger is read as empty, never created by a reading command.
  test("bad-input-1: resume / show of an unknown id write nothing (no state folder, no ledger)", async () => {
    for (const [args, line] of [
      [["resume", "0193a1b2", "hi"], /no session "0193a1b2"/],
      [["show", "0193a1b2"], /no session "0193a1b2"/],
    ] as [string[], RegExp][]) {
      const r = await refuse(args);
      expectRefusal(r, 2, line);
    }
  });
});
