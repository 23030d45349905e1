// Closed pipes and full devices around agentport, through the compiled binary:
// a stderr nobody reads (`2>&1 >/dev/null | head -c 5`) or that cannot take a
// byte (`2>/dev/full`) never crashes a run; a stdout that cannot be written
// is exit 5 and one line, never exit 0 with nothing written.
import { describe, expect, test } from "bun:test";
import { closeSync, existsSync, openSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { agentport, BIN, fakeProject, ROOT, type FakeProject } from "./helpers.ts";

interface Shell {
  /** agentport's own exit code (not the pipeline's). */
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `agentport ARGS` inside a bash pipeline: `redirect` is what follows the command. */
async function shell(p: FakeProject, args: string, redirect: string, env: Record<string, string> = {}): Promise<Shell> {
  const script = `"$AP" ${args} ${redirect}; echo "agentport-exit=\${PIPESTATUS[0]}" >&3`;
  const proc = Bun.spawn(["bash", "-c", `exec 3>&2; ${script}`], {
    cwd: p.proj,
    env: { ...process.env, NO_COLOR: "1", ...p.env, AP: BIN, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const match = /agentport-exit=(\d+)/.exec(stderr);
  if (!match) throw new Error(`no exit code from the pipeline: ${stderr}`);
  return { code: Number(match[1]), stdout, stderr: stderr.replace(match[0], "") };
}

/** Every phase of the project's ledger: all finished, none left running. */
function phases(p: FakeProject): { status: string | null; ended_at: string | null }[] {
  const file = join(p.env.AGENTPORT_HOME!, "ledger.sqlite");
  expect(existsSync(file)).toBe(true);
  const db = new Database(file, { readonly: true });
  try {
    return db.query<{ status: string | null; ended_at: string | null }, []>(`SELECT status, ended_at FROM phases ORDER BY id`).all();
  } finally {
    db.close();
  }
}

describe("a stderr that cannot be written", () => {
  test("`2>&1 >/dev/null | head -c 5`: the run goes on, is finished in the ledger, exits as the agent did", async () => {
    const p = fakeProject("agentport-pipes-");
    const ran = await shell(p, `run --agent claude --progress lines "hi"`, `2>&1 >/dev/null | head -c 5`, {
      AGENTPORT_FAKE_SCENARIO: "slow-tokens",
    });
    expect(ran.stdout).toHaveLength(5);
    expect(ran.code).toBe(0);
    expect(phases(p)).toEqual([{ status: "completed", ended_at: expect.any(String) }]);
  });

  test("`2>/dev/full`: the result still reaches stdout and the phase is finished", async () => {
    const p = fakeProject("agentport-pipes-");
    const ran = await shell(p, `run --agent claude --progress lines --verbose "hi"`, `2>/dev/full`, { AGENTPORT_FAKE_SCENARIO: "tools" });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe("Done.\n");
    expect(phases(p)).toEqual([{ status: "completed", ended_at: expect.any(String) }]);
  });

  test("a failed run with stderr closed keeps its exit code", async () => {
    const p = fakeProject("agentport-pipes-");
    const ran = await shell(p, `run --agent claude "hi"`, `2>/dev/full`, { AGENTPORT_FAKE_SCENARIO: "crash" });
    expect(ran.code).toBe(1);
    expect(phases(p)).toEqual([{ status: "failed", ended_at: expect.any(String) }]);
  });
});

describe("a stdout that cannot be written", () => {
  test("`>/dev/full` is exit 5 and one line naming stdout, the phase still finished", async () => {
    const p = fakeProject("agentport-pipes-");
    const ran = await shell(p, `run --agent claude --progress off "hi"`, `>/dev/full`, { AGENTPORT_FAKE_SCENARIO: "text" });
    expect(ran.code).toBe(5);
    const lines = ran.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("stdout");
    expect(lines[0]).toContain("ENOSPC");
    expect(phases(p)).toEqual([{ status: "completed", ended_at: expect.any(String) }]);
  });

  test("`--json >/dev/full` too", async () => {
    const p = fakeProject("agentport-pipes-");
    const ran = await shell(p, `run --agent claude --json --quiet "hi"`, `>/dev/full`, { AGENTPORT_FAKE_SCENARIO: "text" });
    expect(ran.code).toBe(5);
  });

  test("a reader that went away (`| head -c 3`) is no error: the run's own exit code", async () => {
    const p = fakeProject("agentport-pipes-");
    const ran = await shell(p, `run --agent claude --progress off "hi"`, `| head -c 3`, { AGENTPORT_FAKE_SCENARIO: "text" });
    expect(ran.stdout).toBe("Hel");
    expect(ran.code).toBe(0);
  });

  test("`sessions --json >/dev/full` is exit 5 as well", async () => {
    const p = fakeProject("agentport-pipes-");
    await shell(p, `run --agent claude --progress off "hi"`, `>/dev/null`, { AGENTPORT_FAKE_SCENARIO: "text" });
    const ran = await shell(p, `sessions --json`, `>/dev/full`);
    expect(ran.code).toBe(5);
  });
});

describe("closed early, closed before, non-blocking", () => {
  test("`>&-`: a closed stdout is exit 5 and one line on stderr before anything runs, never exit 0 with the result written nowhere", async () => {
    const p = fakeProject("agentport-pipes-");
    const ran = await shell(p, `run --agent claude --progress off "hi"`, `>&-`, { AGENTPORT_FAKE_SCENARIO: "text" });
    expect(ran.code).toBe(5);
    expect(ran.stderr.trim().split("\n")).toEqual([expect.stringMatching(/stdout is closed/)]);
    expect(existsSync(join(p.env.AGENTPORT_HOME!, "runs"))).toBe(false);
    const json = await shell(p, `run --agent claude --json "hi"`, `>&-`, { AGENTPORT_FAKE_SCENARIO: "text" });
    expect(json.code).toBe(5);
  });

  test("`2>&-`: a closed stderr loses the human lines, never the result nor the exit code", async () => {
    const p = fakeProject("agentport-pipes-");
    const ran = await shell(p, `run --agent claude --progress lines --verbose "hi"`, `2>&-`, { AGENTPORT_FAKE_SCENARIO: "tools" });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe("Done.\n");
    expect(phases(p)).toEqual([{ status: "completed", ended_at: expect.any(String) }]);
    const failed = await shell(p, `run --agent claude --json "hi"`, `2>&-`, { AGENTPORT_FAKE_SCENARIO: "crash" });
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ status: "failed" });
  });

  test("a reader gone before the first byte (`| true`): no crash, the run's own exit code, its error line still on stderr", async () => {
    const p = fakeProject("agentport-pipes-");
    // The reader is gone before agentport starts writing: `true` exits at once, the agent takes its time.
    const slow = JSON.stringify({ steps: [{ sleep: 300 }, { text: "late" }, { result: { text: "late" } }] });
    const ran = await shell(p, `run --agent claude --json --progress off "hi"`, `| true`, { AGENTPORT_FAKE_SCENARIO: slow });
    expect(ran.code).toBe(0);
    expect(ran.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^\[info\] claude completed · /)]);
    const crashed = await shell(p, `run --agent claude --json --progress off "hi"`, `| true`, { AGENTPORT_FAKE_SCENARIO: "crash" });
    expect(crashed.code).toBe(1);
    expect(crashed.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^\[error\] failed: /),
      expect.stringMatching(/^\[info\] claude failed · /),
      expect.stringMatching(/^\[info\] to resume: agentport resume /),
    ]);
    expect(phases(p)).toEqual([
      { status: "completed", ended_at: expect.any(String) },
      { status: "failed", ended_at: expect.any(String) },
    ]);
  });

  test("a non-blocking stdout pipe (another Bun process set it) with a slow reader: the whole result, exit 0", async () => {
    const p = fakeProject("agentport-pipes-");
    const text = "x".repeat(300_000);
    const big = join(p.root, "big.json");
    writeFileSync(big, JSON.stringify({ steps: [{ text }, { result: { text } }] }));
    // Bun's process.stdout leaves the pipe it shares with agentport O_NONBLOCK; the reader waits, so the pipe fills.
    const wrapper = join(p.root, "after-bun.sh");
    writeFileSync(wrapper, `#!/bin/sh\n"$BUN" -e "process.stdout.write('')"\nexec "$REAL" "$@"\n`, { mode: 0o755 });
    const ran = await shell(p, `run --agent claude --progress off "hi"`, `| (sleep 0.5; cat)`, {
      AGENTPORT_FAKE_SCENARIO: big,
      AP: wrapper,
      BUN: process.execPath,
      REAL: BIN,
    });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe(`${text}\n`);
  });
});

describe("the caller's stdout and stderr are left as they were", () => {
  /** Whether `fd` (this process's, shared with the child) is non-blocking: /proc says it in its flags. */
  const nonBlocking = (fd: number): boolean =>
    (Number.parseInt(/flags:\s+(\d+)/.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))![1]!, 8) & 0o4000) !== 0;

  // Bun's process.stdout and process.stderr set O_NONBLOCK on the file they write and leave it so:
  // the program that writes there next (a shell's `cat`) would then get EAGAIN. agentport writes fd 1 and 2 as they are.
  test.skipIf(!existsSync("/proc/self/fdinfo"))(
    "run, resume, replay, sessions, show, --version, --help and a refusal leave both blocking",
    async () => {
      const p = fakeProject("agentport-pipes-");
      const fixture = join(ROOT, "test", "fixtures", "claude", "a-plain.plain.jsonl");
      const first = await agentport(["run", "--agent", "claude", "--json", "--progress", "off", "hi"], {
        cwd: p.proj,
        env: { ...p.env, AGENTPORT_FAKE_SCENARIO: "text" },
      });
      const id = (JSON.parse(first.stdout) as { session_id: string }).session_id;
      const commands = [
        ["run", "--agent", "claude", "--progress", "lines", "--verbose", "hi"],
        ["run", "--agent", "claude", "--json", "--progress", "json", "hi"],
        ["replay", "--agent", "claude", fixture],
        ["sessions"],
        ["resume", id, "more"],
        ["show", "--json", id],
        ["--version"],
        ["--help"],
        ["run", "--agent", "nope", "hi"],
      ];
      for (const args of commands) {
        const out = openSync(join(p.root, "out"), "w");
        const err = openSync(join(p.root, "err"), "w");
        try {
          const proc = Bun.spawn([BIN, ...args], {
            cwd: p.proj,
            env: { ...process.env, NO_COLOR: "1", ...p.env, AGENTPORT_FAKE_SCENARIO: "tools" },
            stdin: "ignore",
            stdout: out,
            stderr: err,
          });
          await proc.exited;
          expect({ args, stdout: nonBlocking(out), stderr: nonBlocking(err) }).toEqual({ args, stdout: false, stderr: false });
          expect(readFileSync(join(p.root, "out"), "utf8") + readFileSync(join(p.root, "err"), "utf8")).not.toBe("");
        } finally {
          closeSync(out);
          closeSync(err);
        }
      }
    },
  );
});

describe("no stdin/stdout deadlock", () => {
  test("an agent that writes 1 MiB before it reads a 1 MiB prompt finishes", async () => {
    const p = fakeProject("agentport-pipes-");
    // More than a pipe holds each way: the prompt must be written while stdout is read.
    const scenario = JSON.stringify({ beforePrompt: [{ oversize: 1024 * 1024 }], steps: [{ text: "read it all" }, { result: {} }] });
    const prompt = `${"p".repeat(1024 * 1024)}\n`;
    const ran = await agentport(["run", "--agent", "claude", "--json", "--timeout", "60", "-"], {
      cwd: p.proj,
      stdin: prompt,
      env: { ...p.env, AGENTPORT_FAKE_SCENARIO: scenario },
    });
    expect(JSON.parse(ran.stdout)).toMatchObject({ status: "completed", text: "read it all" });
    expect(ran.code).toBe(0);
  });
});

describe("stderr.log stays bounded", () => {
  test("an agent that writes 100 MB to stderr leaves at most 8 MiB: the head, the cut marked, the tail", async () => {
    const p = fakeProject("agentport-pipes-");
    const scenario = JSON.stringify({ steps: [{ text: "noisy" }, { stderrFlood: 100 * 1024 * 1024 }, { result: {} }] });
    const ran = await agentport(["run", "--agent", "claude", "--json", "--timeout", "120", "noise"], {
      cwd: p.proj,
      env: { ...p.env, AGENTPORT_FAKE_SCENARIO: scenario },
    });
    expect(JSON.parse(ran.stdout)).toMatchObject({ status: "completed" });
    const runs = join(p.env.AGENTPORT_HOME!, "runs");
    const [runDir] = readdirSync(runs);
    const log = readFileSync(join(runs, runDir!, "stderr.log"), "latin1");
    expect(log.length).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(log.length).toBeGreaterThan(8 * 1024 * 1024 - 4096);
    expect(log.startsWith("stderr line 000000000 ")).toBe(true);
    const mark = /\n\[agentport: (\d+) bytes of stderr cut here; the first 4194304 and the last (\d+) of (\d+) are kept\]\n/.exec(log);
    expect(mark).not.toBeNull();
    const [cut, last, total] = [Number(mark![1]), Number(mark![2]), Number(mark![3])];
    expect(total).toBeGreaterThan(100 * 1024 * 1024 - 100);
    expect(4194304 + cut + last).toBe(total);
    expect(log.length).toBe(4194304 + mark![0].length + last);
    // The tail is the end of what was written: the last line, whole.
    expect(log.endsWith("e\n")).toBe(true);
  }, 120_000);

  test("a small stderr is kept whole, without a marker", async () => {
    const p = fakeProject("agentport-pipes-");
    const ran = await agentport(["run", "--agent", "claude", "--json", "x"], {
      cwd: p.proj,
      env: { ...p.env, AGENTPORT_FAKE_SCENARIO: "crash" },
    });
    expect(ran.code).toBe(1);
    const runs = join(p.env.AGENTPORT_HOME!, "runs");
    const [runDir] = readdirSync(runs);
    expect(readFileSync(join(runs, runDir!, "stderr.log"), "utf8")).toBe("\u001b[31mError: something broke\u001b[0m\n");
  });
});
