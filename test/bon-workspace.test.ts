// `agentport bon` never touches the user's checkout, against the fake pi, in a
// repository whose .gitignore lists .env, node_modules/ and build/: an arm
// that overwrites ignored files and writes an fsmonitor command into its
// workspace's .git/config (the command never runs, the user's files and
// .git/config stay byte for byte), a no-op arm (red: no change), --setup and
// --copy making a gate that needs node_modules green in both modes, --apply,
// kill -9 mid-batch then a second batch that removes the stale workspace.
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git as agentportGit } from "../src/io/git.ts";
import { isRunning, waitGone } from "../src/io/proc.ts";
import {
  bon,
  box,
  envelope,
  fake,
  git,
  ledgerRows,
  MODEL,
  perPhase,
  PRIME,
  readHarvest,
  settledIn,
  sh,
  statusLines,
  useFakePi,
  type Box,
} from "./bon-fixture.ts";
import { BIN } from "./helpers.ts";

useFakePi();

const USER_ENV = "TOKEN=user\n";
const USER_DEP = "module.exports = 'user';\n";

/** The box, with ignored files the user has and a commit of the .gitignore. */
function ignoredBox(): Box & { mark: string; snapshot: () => Record<string, string> } {
  const b = box();
  writeFileSync(join(b.repo, ".gitignore"), ".env\nnode_modules/\nbuild/\n");
  git(b.repo, "add", ".gitignore");
  git(b.repo, "commit", "-qm", "ignore");
  writeFileSync(join(b.repo, ".env"), USER_ENV);
  mkdirSync(join(b.repo, "node_modules", "dep"), { recursive: true });
  writeFileSync(join(b.repo, "node_modules", "dep", "index.js"), USER_DEP);
  const mark = join(b.root, "fsmonitor-ran");
  const files = [".env", "node_modules/dep/index.js", ".git/config", ".git/HEAD", ".git/index"];
  const snapshot = () => Object.fromEntries(files.map((f) => [f, readFileSync(join(b.repo, f), "latin1")]));
  return { ...b, mark, snapshot };
}

/** An fsmonitor command in a workspace's git config: git would run it on status, add, checkout… */
const hostileConfig = (mark: string) => `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "touch ${mark}; echo"\n`;

/** Un-ignores and overwrites the ignored files, writes the workspace's git config and the answer: its gate, which checks the user's dependency, is red. */
const armHostile = (gitDir: string, mark: string) => [
  { writeFile: { path: ".gitignore", content: "build/\n" } },
  { writeFile: { path: ".env", content: "TOKEN=arm\n" } },
  { writeFile: { path: "node_modules/dep/index.js", content: "module.exports = 'arm';\n" } },
  { writeFile: { path: `../${gitDir}/config`, content: hostileConfig(mark) } },
  { writeFile: { path: "answer.txt", content: "42\n" } },
  envelope("Wrote 42.", ["answer.txt"]),
];
const armGreen = [{ writeFile: { path: "answer.txt", content: "42\n" } }, envelope("Wrote 42.", ["answer.txt"])];
/** Reports success, changes nothing. */
const armNoop = [envelope("Nothing to do.", [])];

const PREPARE = ["--copy", ".env", "--copy", "node_modules", "--setup", "mkdir -p build && cp node_modules/dep/index.js build/dep.js"];
/** Needs what --copy and --setup bring, as the user has it. */
const GATES = [
  "--gate",
  "grep -q user node_modules/dep/index.js && grep -qx TOKEN=user .env && grep -q user build/dep.js",
  "--gate",
  "grep -qx 42 answer.txt",
];

function expectUntouched(b: ReturnType<typeof ignoredBox>, before: Record<string, string>) {
  expect(b.snapshot()).toEqual(before);
  expect(existsSync(b.mark)).toBe(false);
  expect(git(b.repo, "worktree", "list", "--porcelain").match(/^worktree /gm)?.length).toBe(1);
}

function expectArms(h: ReturnType<typeof readHarvest>, gitDir: string) {
  const byArm = (k: number) => h.arms.find((a) => a.arm === k)!;
  const hostile = byArm(1);
  expect(hostile.verdict).toBe("red");
  expect(hostile.reason).toContain("grep -q user node_modules/dep/index.js");
  expect(hostile.reason).toContain(`the arm changed .git/config: put back`);
  expect(hostile.ignored_changes).toEqual([
    { path: ".env", change: "changed" },
    { path: "node_modules/dep/index.js", change: "changed" },
  ]);
  const patch = readFileSync(hostile.patch!, "utf8");
  expect(patch).toContain("b/answer.txt");
  // .gitignore is tracked: its change is in the patch; what it ignored before never is.
  expect(patch).toContain("b/.gitignore");
  expect(patch).not.toContain("b/.env");
  expect(patch).not.toContain("TOKEN");
  expect(patch).not.toContain("b/node_modules");
  expect(patch).not.toContain("module.exports");
  expect(patch).not.toContain(gitDir);
  expect(byArm(2)).toMatchObject({ verdict: "green", reason: "", ignored_changes: [] });
  expect(byArm(3)).toMatchObject({ verdict: "red", reason: "no change", patch_bytes: 0 });
  expect(h.winner?.arm).toBe(2);
  expect(existsSync(join(h.run_dir, "workspaces"))).toBe(false);
}

describe("the user's checkout is only read", () => {
  test("agentport's git runs no fsmonitor command and no hook, where plain git runs both", async () => {
    const b = ignoredBox();
    const scratch = join(b.root, "scratch");
    git(b.root, "init", "-q", "-b", "main", scratch);
    writeFileSync(join(scratch, "f.txt"), "f\n");
    git(scratch, "add", ".");
    git(scratch, "commit", "-qm", "f");
    writeFileSync(join(scratch, ".git", "config"), hostileConfig(b.mark));
    const hookMark = join(b.root, "hook-ran");
    mkdirSync(join(scratch, ".git", "hooks"), { recursive: true });
    writeFileSync(join(scratch, ".git", "hooks", "post-checkout"), `#!/bin/sh\ntouch ${hookMark}\n`, { mode: 0o755 });
    await agentportGit(scratch, ["status", "--porcelain"]);
    await agentportGit(scratch, ["checkout", "-q", "-b", "other"]);
    expect(existsSync(b.mark)).toBe(false);
    expect(existsSync(hookMark)).toBe(false);
    // The control: the same repository with plain git runs both.
    sh(scratch, "git", "status", "--porcelain");
    sh(scratch, "git", "checkout", "-q", "main");
    expect(existsSync(b.mark)).toBe(true);
    expect(existsSync(hookMark)).toBe(true);
  });

  test("one after the other: a hostile arm, a green one, a no-op; the reset puts the ignored files back; --apply", async () => {
    const b = ignoredBox();
    const before = b.snapshot();
    const scenario = { turns: [PRIME, armHostile("shared.git", b.mark), armGreen, armNoop] };
    const ran = await bon(b, [b.spec, ...MODEL, ...PREPARE, ...GATES, "--apply", "--json"], {
      AGENTPORT_FAKE_SCENARIO: JSON.stringify(scenario),
    });
    if (ran.code !== 0) throw new Error(ran.stderr);
    const h = readHarvest(ran.stdout);
    expect(h.mode).toBe("sequential");
    expectArms(h, "shared.git");
    // The hostile arm's ignored changes were put back before the next arm: its gate passed.
    expect(h.arms.find((a) => a.arm === 1)!.reason).toContain("the workspace was prepared again");
    // --apply: the winner in the index and the tree, nothing else changed.
    expect(h.applied).toEqual({ ok: true, reason: "" });
    expect(ran.stderr).toContain(`bon: applied to ${b.repo} with git apply --index`);
    expect(statusLines(b.repo)).toEqual(["A  answer.txt", "?? specs/task.md"]);
    expect(readFileSync(join(b.repo, "answer.txt"), "utf8")).toBe("42\n");
    const { [".git/index"]: _index, ...rest } = before;
    const { [".git/index"]: _after, ...now } = b.snapshot();
    expect(now).toEqual(rest);
    expect(existsSync(b.mark)).toBe(false);
  }, 60_000);

  test("in parallel: the same arms, a workspace each, prepared by --copy and --setup; without --apply the checkout is as found", async () => {
    const b = ignoredBox();
    const before = b.snapshot();
    const wrapper = perPhase(b, { prime: PRIME, "arm-1": armHostile("arm-1.git", b.mark), "arm-2": armGreen, "arm-3": armNoop });
    const ran = await bon(b, [b.spec, ...MODEL, ...PREPARE, ...GATES, "--parallel", "--json"], { AGENTPORT_PI_BIN: wrapper });
    if (ran.code !== 0) throw new Error(ran.stderr);
    const h = readHarvest(ran.stdout);
    expect(h.mode).toBe("parallel");
    expectArms(h, "arm-1.git");
    expect(h.applied).toBeNull();
    expect(ran.stderr).toContain("your checkout is unchanged; take it with");
    expect(statusLines(b.repo)).toEqual(["?? specs/task.md"]);
    expectUntouched(b, before);
  }, 60_000);

  test("bon.setup and bon.copy in agentport.json prepare the workspaces as the flags do, once the config is trusted", async () => {
    const b = ignoredBox();
    const setupRan = join(b.root, "setup-ran");
    writeFileSync(
      join(b.repo, "agentport.json"),
      JSON.stringify({ bon: { copy: [".env", "node_modules"], setup: [PREPARE.at(-1), `touch ${setupRan}`] } }),
    );
    git(b.repo, "add", "agentport.json");
    git(b.repo, "commit", "-qm", "config");
    const scenario = { AGENTPORT_FAKE_SCENARIO: JSON.stringify({ turns: [PRIME, armGreen, armNoop] }) };
    // Found and not trusted: ignored, so its setup never runs and the gate that needs node_modules is red.
    const untrusted = await bon(b, [b.spec, ...MODEL, ...GATES, "--arms", "2", "--json"], scenario);
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toContain("ignoring untrusted agentport.json");
    expect(existsSync(setupRan)).toBe(false);
    expect(
      Bun.spawnSync([BIN, "trust"], { cwd: b.repo, env: { ...process.env, AGENTPORT_HOME: b.home, AGENTPORT_CONFIG: "" } }).exitCode,
    ).toBe(0);
    const ran = await bon(b, [b.spec, ...MODEL, ...GATES, "--arms", "2", "--json"], scenario);
    if (ran.code !== 0) throw new Error(ran.stderr);
    expect(readHarvest(ran.stdout).arms.map((a) => [a.arm, a.verdict, a.reason])).toEqual([
      [1, "green", ""],
      [2, "red", "no change"],
    ]);
    expect(existsSync(setupRan)).toBe(true);
    writeFileSync(join(b.root, "bad.json"), JSON.stringify({ bon: { copy: "node_modules" } }));
    const bad = await bon(b, [b.spec, ...MODEL, "--config", join(b.root, "bad.json")]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("bon.copy");
  }, 60_000);

  test("a prime that changes an ignored file (or its .git) fails the batch before any arm", async () => {
    const b = ignoredBox();
    const before = b.snapshot();
    const prime = [
      { writeFile: { path: ".env", content: "TOKEN=prime\n" } },
      { writeFile: { path: "../shared.git/info/exclude", content: "*\n" } },
      ...PRIME,
    ];
    const ran = await bon(b, [b.spec, ...MODEL, "--copy", ".env", "--json"], {
      AGENTPORT_FAKE_SCENARIO: JSON.stringify({ turns: [prime, armGreen] }),
    });
    expect(ran.code).toBe(1);
    const h = readHarvest(ran.stdout);
    expect(h.prime!.reason).toBe("the prime changed its workspace (.git/info/exclude, changed .env): it must only read");
    expect(h.arms).toEqual([]);
    expectUntouched(b, before);
  }, 60_000);

  test("a setup that fails stops the batch before the prime's turn: exit 1, no token spent", async () => {
    const b = ignoredBox();
    const ran = await bon(b, [b.spec, ...MODEL, "--setup", "echo broken >&2; exit 3", "--json"], {
      AGENTPORT_FAKE_SCENARIO: JSON.stringify({ turns: [PRIME, armGreen] }),
    });
    expect(ran.code).toBe(1);
    const h = readHarvest(ran.stdout);
    expect(h.prime).toMatchObject({ ok: false, tokens: null });
    expect(h.prime!.reason).toContain("setup `echo broken >&2; exit 3` exited 3: broken");
    expect(h.arms).toEqual([]);
    const workspace = ledgerRows(b.home, h.batch_id).find((r) => r.kind === "workspace")!;
    expect(workspace).toMatchObject({ status: "failed", ok: 0 });
  }, 60_000);

  test("--copy of a path git does not ignore, or that does not exist: refused at zero tokens", async () => {
    const b = ignoredBox();
    const tracked = await bon(b, [b.spec, ...MODEL, "--copy", "README.md"]);
    expect(tracked.code).toBe(3);
    expect(tracked.stderr).toContain("--copy README.md: not ignored by git");
    const missing = await bon(b, [b.spec, ...MODEL, "--copy", "build"]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("does not exist");
    expect(existsSync(b.home)).toBe(false);
  });
});

describe("a killed batch leaves nothing behind", () => {
  test("kill -9 during --setup: the setup command's tree dies with agentport (the keeper)", async () => {
    const b = ignoredBox();
    const pidFile = join(b.root, "setup-sleep.pid");
    // The pid is told a moment after the start: agentport names a command to its keeper right after starting it.
    const setup = `sleep 120 & p=$!; sleep 0.3; echo $p > ${pidFile}; wait`;
    const proc = Bun.spawn([BIN, "bon", b.spec, ...MODEL, "--setup", setup, "--json"], {
      cwd: b.repo,
      env: {
        ...process.env,
        NO_COLOR: "1",
        AGENTPORT_HOME: b.home,
        AGENTPORT_GATEWAY: "",
        AGENTPORT_PI_BIN: fake,
        AGENTPORT_FAKE_PI_DIALECT: "0.73.1",
        AGENTPORT_FAKE_SCENARIO: JSON.stringify({ turns: [PRIME, armGreen] }),
      },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    const until = performance.now() + 20_000;
    while (!existsSync(pidFile) || readFileSync(pidFile, "utf8").trim() === "") {
      if (performance.now() > until) throw new Error("the setup never started");
      await Bun.sleep(20);
    }
    const sleeper = Number(readFileSync(pidFile, "utf8"));
    expect(isRunning(sleeper)).toBe(true);
    proc.kill("SIGKILL");
    await proc.exited;
    expect(await waitGone(sleeper, 5_000)).toBe(true);
  }, 60_000);

  test("kill -9 mid-arm: no worktree in the user's repo; the next batch removes the stale workspace and finishes its ledger row", async () => {
    const b = ignoredBox();
    const before = b.snapshot();
    const pidFile = join(b.root, "grandchild.pid");
    const hanging = [{ writeFile: { path: "answer.txt", content: "42\n" } }, { grandchild: pidFile }, { hang: true, ignoreTerm: true }];
    const proc = Bun.spawn([BIN, "bon", b.spec, ...MODEL, "--copy", "node_modules", "--json", "--no-isolate"], {
      cwd: b.repo,
      env: {
        ...process.env,
        NO_COLOR: "1",
        AGENTPORT_HOME: b.home,
        AGENTPORT_GATEWAY: "",
        AGENTPORT_PI_BIN: fake,
        AGENTPORT_FAKE_PI_DIALECT: "0.73.1",
        AGENTPORT_FAKE_SCENARIO: JSON.stringify({ turns: [PRIME, hanging] }),
      },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
    });
    const until = performance.now() + 20_000;
    while (!existsSync(pidFile) || readFileSync(pidFile, "utf8") === "") {
      if (performance.now() > until) throw new Error(`no grandchild: ${await new Response(proc.stderr).text()}`);
      await Bun.sleep(20);
    }
    proc.kill("SIGKILL");
    await proc.exited;
    const runs = join(b.home, "runs");
    const [killedRun] = readdirSync(runs);
    const stale = join(runs, killedRun!, "workspaces", "shared");
    expect(existsSync(join(stale, "answer.txt"))).toBe(true);
    // Nothing of the batch is registered in the user's repository, nothing there changed.
    expectUntouched(b, before);
    expect(statusLines(b.repo)).toEqual(["?? specs/task.md"]);
    // The keeper ended the batch's pi and its grandchild (which ignores SIGTERM).
    expect(await settledIn(stale)).toEqual([]);
    expect(await waitGone(Number(readFileSync(pidFile, "utf8")), 5_000)).toBe(true);

    const again = await bon(b, [b.spec, ...MODEL, "--arms", "2", "--gate", "grep -qx 42 answer.txt", "--json"], {
      AGENTPORT_FAKE_SCENARIO: JSON.stringify({ turns: [PRIME, armGreen, armNoop] }),
    });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(`removed 1 workspace(s) of interrupted batches: ${stale}`);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(`${stale}.git`)).toBe(false);
    expect(existsSync(join(runs, killedRun!, "workspaces"))).toBe(false);
    const h = readHarvest(again.stdout);
    expect(h.winner?.arm).toBe(1);
    // The killed batch's workspace row is finished: aborted, and by whom.
    const db = new Database(join(b.home, "ledger.sqlite"), { readonly: true });
    const rows = db
      .query<{ status: string; failure: string }, [string]>("SELECT status, failure FROM phases WHERE kind = 'workspace' AND run_id != ?")
      .all(h.batch_id);
    db.close();
    expect(rows).toEqual([{ status: "aborted", failure: `its batch was killed; removed by batch ${h.batch_id}` }]);
    expectUntouched(b, before);
    expect(isRunning(Number(readFileSync(pidFile, "utf8")))).toBe(false);
  }, 60_000);
});
