// `agentport bon` never touches the user's checkout, with the real pi 0.73.1
// against the loopback OpenAI stand-in, in a repository whose .gitignore lists
// .env, node_modules/ and build/. The model plays three arms through pi's own
// bash tool: one overwrites .env and node_modules/dep/index.js and sets
// core.fsmonitor to a command in its workspace's git config, one writes the
// answer and runs `rm -rf .git`, one changes nothing. --copy and --setup
// prepare each workspace so that a gate needing node_modules is green, one
// after the other (with --apply) and in parallel; a batch killed with kill -9
// mid-arm is cleaned up by the next one.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { settledIn } from "./bon-fixture.ts";
import { join } from "node:path";
import type { Harvest } from "../src/bon/harvest.ts";
import { BIN, ROOT } from "./helpers.ts";
import { piEnv, startOpenAIStandin, type Standin } from "./standins/openai.ts";
import type { RecordedRequest, Reply } from "./standins/util.ts";
import { removeTempDirs, spawnCollect, tempDir } from "./standins/util.ts";

const PI = join(ROOT, "node_modules", ".bin", "pi");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

function git(cwd: string, ...args: string[]): string {
  const proc = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    cwd,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (proc.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${proc.stderr.toString()}`);
  return proc.stdout.toString();
}

type Json = Record<string, any>;
const text = (content: unknown): string =>
  typeof content === "string" ? content : Array.isArray(content) ? content.map((c: Json) => c.text ?? "").join("") : "";
const bash = (command: string): Reply => ({ toolCall: { name: "bash", arguments: { command } } });
const report = (files: string[]): Reply => ({
  toolCall: { name: "report_phase", arguments: { status: "success", summary: "Done.", changed_files: files } },
});

/** What each arm's bash does, in the order the arms first ask. */
const hostile = (mark: string) =>
  `printf 'TOKEN=arm\\n' > .env && printf "module.exports = 'arm';\\n" > node_modules/dep/index.js && git config core.fsmonitor 'touch ${mark}; echo' && printf '42\\n' > answer.txt`;
/** Writes the answer, removes .git, then commits: with no .git of its own, git would look for a repository around the workspace. */
const REMOVES_GIT =
  "printf '42\\n' > answer.txt && rm -rf .git && { git add -A && git -c user.name=a -c user.email=a@a commit -qm stolen; true; }";

/** The model: the prime reads; arms play hostile, removes-.git, no-op (or all hang, while `hang` is set). */
function model(mark: string, state: { hang: boolean }) {
  let arms = 0;
  return (req: RecordedRequest): Reply => {
    const messages = req.messages as Json[];
    const lastUser = messages.findLastIndex((m) => m.role === "user");
    const ask = text(messages[lastUser]?.content);
    const step = messages.slice(lastUser + 1).filter((m) => m.role === "assistant").length;
    if (ask.includes("READING ONLY")) {
      if (step === 0) return { toolCall: { name: "read", arguments: { path: "specs/task.md" } } };
      if (step === 1)
        return {
          toolCall: {
            name: "report_phase",
            arguments: { status: "success", summary: "I will write 42 to answer.txt.", changed_files: [] },
          },
        };
      return { text: "Read." };
    }
    if (!ask.includes("now implement the spec")) return { text: "?" };
    if (state.hang) return step === 0 ? bash("sleep 120") : { text: "Done." };
    if (step === 0) {
      const kind = arms++ % 3;
      if (kind === 0) return bash(hostile(mark));
      if (kind === 1) return bash(REMOVES_GIT);
      return report([]);
    }
    // After its bash, an arm that wrote the answer reports it; the no-op has reported already.
    if (step === 1 && JSON.stringify(messages[lastUser + 1]).includes('"bash"')) return report(["answer.txt"]);
    return { text: "Done." };
  };
}

interface World {
  dir: string;
  repo: string;
  home: string;
  mark: string;
  env: Record<string, string>;
  state: { hang: boolean };
  snapshot: () => Record<string, string>;
}

/** `home`: the state folder inside the repository (ignored), so the workspaces are inside the user's checkout too. */
function world(homeInRepo = false): World {
  const dir = tempDir("agentport-bon-ws-");
  const mark = join(dir, "fsmonitor-ran");
  const state = { hang: false };
  const standin = startOpenAIStandin(model(mark, state));
  standins.push(standin);
  const repo = join(dir, "repo");
  mkdirSync(repo, { recursive: true });
  git(dir, "init", "-q", "-b", "main", repo);
  writeFileSync(join(repo, "README.md"), "# demo\n");
  writeFileSync(join(repo, ".gitignore"), ".env\nnode_modules/\nbuild/\n.agentport/\n");
  git(repo, "add", ".");
  git(repo, "commit", "-qm", "init");
  writeFileSync(join(repo, ".env"), "TOKEN=user\n");
  mkdirSync(join(repo, "node_modules", "dep"), { recursive: true });
  writeFileSync(join(repo, "node_modules", "dep", "index.js"), "module.exports = 'user';\n");
  mkdirSync(join(repo, "specs"));
  writeFileSync(
    join(repo, "specs", "task.md"),
    "# Task\n\nWrite the number 42, on one line, to answer.txt at the top of the repository.\n",
  );
  const home = homeInRepo ? join(repo, ".agentport") : join(dir, "agentport");
  const files = [".env", "node_modules/dep/index.js", ".git/config", ".git/HEAD"];
  const snapshot = () => Object.fromEntries(files.map((f) => [f, readFileSync(join(repo, f), "latin1")]));
  return {
    dir,
    repo,
    home,
    mark,
    state,
    snapshot,
    env: { ...piEnv(dir, standin.url), AGENTPORT_HOME: home, AGENTPORT_PI_BIN: PI, AGENTPORT_GATEWAY: "" },
  };
}

const PREPARE = ["--copy", ".env", "--copy", "node_modules", "--setup", "mkdir -p build && cp node_modules/dep/index.js build/dep.js"];
const GATES = [
  "--gate",
  "grep -q user node_modules/dep/index.js && grep -qx TOKEN=user .env && grep -q user build/dep.js",
  "--gate",
  "grep -qx 42 answer.txt",
];

async function bon(w: World, extra: string[]) {
  const args = [
    "bon",
    "specs/task.md",
    "--model",
    "standin/standin-model",
    "--direct",
    "--require-ext",
    "agentport",
    "--json",
    "--progress",
    "off",
    ...PREPARE,
    ...GATES,
    ...extra,
  ];
  const ran = await spawnCollect([BIN, ...args], { cwd: w.repo, env: w.env, timeoutMs: 80_000 });
  if (!ran.stdout.trim().startsWith("{")) throw new Error(`no harvest (exit ${ran.code}): ${ran.stderr}`);
  return { ...ran, harvest: JSON.parse(ran.stdout) as Harvest };
}

function expectArms(h: Harvest) {
  const hostileArm = h.arms.find((a) => a.ignored_changes.length > 0)!;
  expect(hostileArm).toMatchObject({ verdict: "red" });
  expect(hostileArm.ignored_changes).toEqual([
    { path: ".env", change: "changed" },
    { path: "node_modules/dep/index.js", change: "changed" },
  ]);
  expect(hostileArm.reason).toContain("the arm changed .git/config: put back");
  const removed = h.arms.find((a) => a.reason.includes(".git (deleted)"))!;
  expect(removed).toMatchObject({ verdict: "green" });
  expect(readFileSync(removed.patch!, "utf8")).toContain("diff --git a/answer.txt b/answer.txt");
  const noop = h.arms.find((a) => a.reason === "no change")!;
  expect(noop).toMatchObject({ verdict: "red", patch_bytes: 0 });
  expect(new Set([hostileArm.arm, removed.arm, noop.arm]).size).toBe(3);
  expect(h.winner?.arm).toBe(removed.arm);
  expect(existsSync(join(h.run_dir, "workspaces"))).toBe(false);
}

function expectRepoIntact(w: World, before: Record<string, string>) {
  expect(w.snapshot()).toEqual(before);
  expect(existsSync(w.mark)).toBe(false);
  expect(git(w.repo, "worktree", "list", "--porcelain").match(/^worktree /gm)?.length).toBe(1);
  expect(git(w.repo, "log", "--format=%s")).toBe("init\n");
  git(w.repo, "fsck", "--no-progress");
}

/** Whether the arm's `sleep` runs in `dir`. */
function sleepingIn(dir: string): boolean {
  return readdirSync("/proc").some((e) => {
    try {
      return (
        /^\d+$/.test(e) && readlinkSync(`/proc/${e}/cwd`).startsWith(dir) && readFileSync(`/proc/${e}/cmdline`, "utf8").startsWith("sleep")
      );
    } catch {
      return false;
    }
  });
}

describe("bon workspaces with the real pi 0.73.1", () => {
  test("one after the other, the state folder inside the checkout: hostile, rm -rf .git then commit, no-op; the reset restores the ignored files; --apply takes the winner", async () => {
    const w = world(true);
    const before = w.snapshot();
    const { code, harvest } = await bon(w, ["--arms", "3", "--apply"]);
    expect(code).toBe(0);
    expect(harvest.mode).toBe("sequential");
    expectArms(harvest);
    expect(harvest.applied).toEqual({ ok: true, reason: "" });
    expect(git(w.repo, "status", "--porcelain", "--untracked-files=all")).toBe("A  answer.txt\n?? specs/task.md\n");
    expectRepoIntact(w, before);
  }, 90_000);

  test("kill -9 mid-arm, then a batch in parallel: the stale workspace is removed first; the same arms, a workspace each", async () => {
    const w = world();
    const before = w.snapshot();
    w.state.hang = true;
    const args = [
      "bon",
      "specs/task.md",
      "--model",
      "standin/standin-model",
      "--direct",
      "--json",
      "--progress",
      "off",
      "--arms",
      "2",
      ...PREPARE,
    ];
    const killed = Bun.spawn([BIN, ...args], {
      cwd: w.repo,
      env: { ...process.env, ...w.env },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    const runs = join(w.home, "runs");
    const until = performance.now() + 40_000;
    let stale = "";
    for (;;) {
      const run = existsSync(runs) ? readdirSync(runs)[0] : undefined;
      stale = run === undefined ? "" : join(runs, run, "workspaces", "shared");
      if (stale !== "" && sleepingIn(stale)) break;
      if (performance.now() > until) throw new Error("the arm never started its sleep");
      await Bun.sleep(50);
    }
    killed.kill("SIGKILL");
    await killed.exited;
    expect(existsSync(stale)).toBe(true);
    expectRepoIntact(w, before);
    // The keeper ended pi and its bash's sleep.
    expect(await settledIn(stale)).toEqual([]);

    w.state.hang = false;
    const { code, harvest, stderr } = await bon(w, ["--arms", "3", "--parallel"]);
    expect(code).toBe(0);
    expect(stderr).toContain(`removed 1 workspace(s) of interrupted batches: ${stale}`);
    expect(existsSync(stale)).toBe(false);
    expect(harvest.mode).toBe("parallel");
    expectArms(harvest);
    expect(harvest.applied).toBeNull();
    expect(git(w.repo, "status", "--porcelain", "--untracked-files=all")).toBe("?? specs/task.md\n");
    expectRepoIntact(w, before);
    const db = new Database(join(w.home, "ledger.sqlite"), { readonly: true });
    const open = db.query("SELECT count(*) AS n FROM phases WHERE kind = 'workspace' AND ended_at IS NULL").get() as { n: number };
    db.close();
    expect(open.n).toBe(0);
  }, 120_000);
});
