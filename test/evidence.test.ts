// Evidence of work through the compiled binary and the fake claude: a tool
// step that really writes (or writes nothing), in a git folder and outside
// one; --expect-change and --expect-file turn a completed run that did not do
// it into `failed` (exit 1), and the verdict always says what changed.
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema } from "../src/core/verdict.ts";
import { agentport, fakeClaudeDir } from "./helpers.ts";

let root: string;
let claude: string;
beforeAll(() => {
  ({ dir: root, claude } = fakeClaudeDir("agentport-evidence-"));
});

const sh = (cwd: string, ...argv: string[]) => {
  const ran = Bun.spawnSync(argv, { cwd, stdout: "pipe", stderr: "pipe" });
  if (ran.exitCode !== 0) throw new Error(`${argv.join(" ")}: ${ran.stderr.toString()}`);
  return ran.stdout.toString();
};

/** A repository with one committed file, one ignored folder, and the user's own staged change. */
function repo(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  sh(dir, "git", "init", "-q");
  writeFileSync(join(dir, "a.txt"), "one\ntwo\n");
  writeFileSync(join(dir, ".gitignore"), "build/\n");
  sh(dir, "git", "add", "-A");
  sh(dir, "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init");
  writeFileSync(join(dir, "staged.txt"), "mine\n");
  sh(dir, "git", "add", "staged.txt");
  return dir;
}

const writing = (command: string) =>
  JSON.stringify({ steps: [{ tool: { name: "Bash", input: { command }, run: command } }, { text: "Done." }, { result: {} }] });
const idle = JSON.stringify({ steps: [{ text: "I looked and changed nothing." }, { result: {} }] });

async function run(cwd: string, scenario: string, args: string[] = [], env: Record<string, string> = {}) {
  const ran = await agentport(["run", "--claude-bin", claude, "--json", "--progress", "off", "--cwd", cwd, ...args, "go"], {
    cwd,
    env: { AGENTPORT_HOME: join(root, "home"), AGENTPORT_FAKE_SCENARIO: scenario, AGENTPORT_CONFIG: "", ...env },
  });
  try {
    return { ...ran, verdict: VerdictSchema.parse(JSON.parse(ran.stdout)) };
  } catch {
    throw new Error(`no verdict (exit ${ran.code}): ${ran.stdout.slice(0, 200)} / ${ran.stderr.slice(0, 400)}`);
  }
}

describe("evidence of work", () => {
  test("a run that edits a file and adds one: changes counted, --expect-change met (exit 0), the user's index untouched", async () => {
    const dir = repo("edits");
    // A repository's own commands never run for agentport's git calls.
    const marker = join(root, "fsmonitor-ran");
    writeFileSync(join(dir, "monitor.sh"), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    sh(dir, "git", "add", "monitor.sh");
    sh(dir, "git", "config", "core.fsmonitor", join(dir, "monitor.sh"));
    const indexBefore = readFileSync(join(dir, ".git", "index"));
    const { code, verdict } = await run(
      dir,
      writing("printf 'one\\nTWO\\nthree\\n' > a.txt; echo new > b.txt; mkdir -p build; echo x > build/out"),
      ["--expect-change"],
    );
    expect(verdict.status).toBe("completed");
    expect(code).toBe(0);
    expect(verdict.changes).toEqual({ files: 2, insertions: 3, deletions: 1 });
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(join(dir, ".git", "index"))).toEqual(indexBefore);
    expect(sh(dir, "git", "status", "--porcelain")).toContain("A  staged.txt");
  });

  test("--expect-change: a completed run that changed nothing fails with no_change (exit 1)", async () => {
    const dir = repo("idle");
    const { code, verdict } = await run(dir, idle, ["--expect-change"]);
    expect(code).toBe(1);
    expect(verdict.status).toBe("failed");
    expect(verdict.ok).toBe(false);
    expect(verdict.failure?.kind).toBe("no_change");
    expect(verdict.changes).toEqual({ files: 0, insertions: 0, deletions: 0 });
  });

  test("a change only in an ignored file is no change", async () => {
    const dir = repo("ignored");
    const { code, verdict } = await run(dir, writing("mkdir -p build; echo x > build/out"), ["--expect-change"]);
    expect(code).toBe(1);
    expect(verdict.failure?.kind).toBe("no_change");
  });

  test("without an expectation an idle run completes, and still says what changed", async () => {
    const { code, verdict } = await run(repo("plain"), idle);
    expect(code).toBe(0);
    expect(verdict.changes).toEqual({ files: 0, insertions: 0, deletions: 0 });
  });

  test("--expect-file: written during the run passes; missing, or only older than the run, fails with missing_file", async () => {
    const dir = join(root, "files");
    mkdirSync(dir);
    writeFileSync(join(dir, "old.md"), "from before\n");
    await Bun.sleep(200);
    const wrote = await run(dir, writing("echo report > report.md"), ["--expect-file", "report.md"]);
    expect(wrote.code).toBe(0);
    expect(wrote.verdict.changes).toBeNull();
    const stale = await run(dir, idle, ["--expect-file", "report.md", "--expect-file", "old.md", "--expect-file", "none.md"]);
    expect(stale.code).toBe(1);
    expect(stale.verdict.failure?.kind).toBe("missing_file");
    expect(`${stale.verdict.failure?.message}`).toContain("without writing report.md, old.md, none.md");
  });

  test("--expect-change outside a git work tree: no change can be shown (exit 1); a run that did not complete keeps its own status", async () => {
    const dir = join(root, "nogit");
    mkdirSync(dir);
    const { code, verdict } = await run(dir, writing("echo x > x.txt"), ["--expect-change"]);
    expect(code).toBe(1);
    expect(verdict.failure?.kind).toBe("no_change");
    expect(verdict.changes).toBeNull();
    const crashed = await run(repo("crash"), JSON.stringify({ steps: [{ text: "x" }, { exit: 3 }] }), ["--expect-change"]);
    expect(crashed.verdict.failure?.kind).not.toBe("no_change");
  });

  test("outside any repository no git is started (a run's start cost); inside one the snapshot still asks git", async () => {
    const shims = join(root, "shims");
    mkdirSync(shims, { recursive: true });
    const log = join(root, "git-calls.log");
    const realGit = Bun.which("git")!;
    writeFileSync(join(shims, "git"), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${realGit}' "$@"\n`, { mode: 0o755 });
    const path = `${shims}:${process.env.PATH}`;
    const calls = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").filter(Boolean).length : 0);
    const dir = join(root, "nogit-calls");
    mkdirSync(dir);
    const outside = await run(dir, idle, [], { PATH: path });
    expect(outside.code).toBe(0);
    expect(outside.verdict.changes).toBeNull();
    expect(calls()).toBe(0);
    const inside = await run(repo("git-calls"), idle, [], { PATH: path });
    expect(inside.code).toBe(0);
    expect(inside.verdict.changes).not.toBeNull();
    expect(calls()).toBeGreaterThan(0);
  });

  test("the roster: expect_change and expect_files in agentport.json", async () => {
    const dir = repo("roster");
    writeFileSync(
      join(dir, "agentport.json"),
      JSON.stringify({ agents: { worker: { agent: "claude", expect_change: true, expect_files: ["out.txt"] } } }),
    );
    const { code, verdict } = await run(dir, idle, ["--config", join(dir, "agentport.json"), "--as", "worker"]);
    expect(code).toBe(1);
    expect(verdict.failure?.kind).toBe("no_change");
    const met = await run(dir, writing("echo y > out.txt"), ["--config", join(dir, "agentport.json"), "--as", "worker"]);
    expect(met.code).toBe(0);
  });
});
