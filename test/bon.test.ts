// `agentport bon` against the fake pi (the compiled binary through a symlink
// named `fake-pi`), in a real git repository: the ranking, the zero-token
// check and its refusals, full batches one after the other in one workspace
// and in parallel in a workspace each, with scripted arms that really write
// files (one green, one red by a gate, one with an invalid envelope), Ctrl-C.
// After each batch the checkout is as found and harvest.json agrees with the
// ledger. Workspace isolation: test/bon-workspace.test.ts.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compareArms, rankArms, winnerOf, type Rankable } from "../src/core/rank.ts";
import { dryRun } from "../src/bon/dry.ts";
import { totalTokens, type Harvest } from "../src/bon/harvest.ts";
import { causeOfVerdict, exitCodeOf, type Applied, type BatchEnd, type BonResult, type Cause } from "../src/bon/result.ts";
import { waitGone } from "../src/io/proc.ts";
import { BIN, tempDir } from "./helpers.ts";
import {
  bon,
  box,
  envelope,
  fake,
  git,
  ledgerRows,
  made,
  MODEL,
  perPhase,
  PRIME,
  readHarvest,
  statusLines,
  useFakePi,
  type Box,
} from "./bon-fixture.ts";

useFakePi();

/** Green: the gate greps 42. */
const ARM_GREEN = [
  { writeFile: { path: "answer.txt", content: "42\n" }, usage: { input: 1000, output: 30 } },
  envelope("Wrote 42.", ["answer.txt"], { input: 1100, output: 20 }),
];
/** Red by the gate; it also changes a tracked file and makes a nested folder, which the reset must undo. */
const ARM_RED_GATE = [
  { writeFile: { path: "README.md", content: "# changed by arm 2\n" }, usage: { input: 900, output: 30 } },
  { writeFile: { path: "answer.txt", content: "41\n" }, usage: { input: 950, output: 30 } },
  { writeFile: { path: "notes/deep/n.txt", content: "n\n" }, usage: { input: 980, output: 30 } },
  envelope("Wrote 41.", ["answer.txt", "README.md", "notes/deep/n.txt"], { input: 1000, output: 20 }),
];
/** Red: pi rejects its envelope (the schema says status is success or failure). */
const ARM_INVALID = [
  { writeFile: { path: "answer.txt", content: "42\n" }, usage: { input: 700, output: 30 } },
  { envelope: { status: "maybe" }, invalid: true },
];

const GATE = ["--gate", "test -f README.md", "--gate", "grep -qx 42 answer.txt"];
/** What every full batch must show: the tree as found, the ranking, the patches, the ledger in agreement. */
function expectBatch(b: Box, h: Harvest) {
  // The tree as found: only the untracked spec.
  expect(statusLines(b.repo)).toEqual(["?? specs/task.md"]);
  expect(readFileSync(join(b.repo, "README.md"), "utf8")).toBe("# demo\n");
  expect(existsSync(join(b.repo, "answer.txt"))).toBe(false);
  expect(existsSync(join(b.repo, "notes"))).toBe(false);

  expect(h.prime).toMatchObject({
    ok: true,
    status: "completed",
    summary: "I will write 42 to answer.txt.",
    model: "standin/standin-model",
  });
  expect(h.arms.map((a) => [a.rank, a.arm, a.verdict])).toEqual([
    [1, 1, "green"],
    [2, 3, "red"],
    [3, 2, "red"],
  ]);
  const arm = (k: number) => h.arms.find((a) => a.arm === k)!;
  expect(arm(2).reason).toBe("gate `grep -qx 42 answer.txt` exited 1");
  expect(arm(3).reason).toContain("invalid envelope: Validation failed");
  expect(arm(3).failure_kind).toBe("envelope_invalid");
  expect(arm(2).changed_files).toEqual(["answer.txt", "README.md", "notes/deep/n.txt"]);
  // Each arm pays only its own turn, not the prime's history it carries (the prime alone is > 15 000 input tokens).
  for (const a of h.arms) {
    expect(a.tokens?.input).toBeGreaterThan(0);
    expect(a.tokens!.input).toBeLessThan(5000);
    expect(a.cost_micro_usd).toBeGreaterThan(0);
  }
  expect(h.prime!.tokens!.input).toBeGreaterThan(15_000);
  const once = totalTokens(h.prime!.tokens)!;
  expect(h.prime_paid).toMatchObject({ arms: 3, tokens_once: once, tokens_n_times: 3 * once, tokens_saved: 2 * once });
  // The totals are the prime's and the arms' tokens, member by member, spelled as in the verdict.
  expect(totalTokens(h.totals.tokens)).toBe(once + h.arms.reduce((s, a) => s + totalTokens(a.tokens)!, 0));
  expect(h.totals.tokens!.input).toBe(h.prime!.tokens!.input + h.arms.reduce((s, a) => s + a.tokens!.input, 0));

  // Patches: harvested whatever the arm did, the spec folder left out; the winner's applies.
  for (const a of h.arms) {
    expect(a.patch).toBe(join(h.run_dir, `arm-${a.arm}.patch`));
    expect(readFileSync(a.patch!).byteLength).toBe(a.patch_bytes);
    expect(readFileSync(a.patch!, "utf8")).not.toContain("specs/");
  }
  expect(readFileSync(arm(1).patch!, "utf8")).toContain("+42");
  const red = readFileSync(arm(2).patch!, "utf8");
  expect(red).toContain("+# changed by arm 2");
  expect(red).toContain("b/notes/deep/n.txt");
  expect(h.winner).toEqual({ arm: 1, model: "standin/standin-model", patch: arm(1).patch!, apply: `git apply --index ${arm(1).patch}` });
  git(b.repo, "apply", "--check", "--index", arm(1).patch!);

  // The ledger: check, prime, every arm, harvest; each arm's tokens and cost its own, as harvest.json says.
  // Each workspace a zero-token phase of the prime's session, finished when it was removed.
  const all = ledgerRows(b.home, h.batch_id);
  const workspaces = all.filter((r) => r.kind === "workspace");
  expect(workspaces.map((r) => r.name)).toEqual(h.mode === "parallel" ? ["arm-1", "arm-2", "arm-3"] : ["shared"]);
  for (const w of workspaces)
    expect(w).toMatchObject({ session_id: h.prime!.session_id, status: "completed", ok: 1, tokens_in: 0, cost_micro_usd: 0 });
  const rows = all.filter((r) => r.kind !== "workspace");
  expect(rows.map((r) => r.name)).toEqual(["check", "prime", ...rows.filter((r) => r.kind === "arm").map((r) => r.name), "harvest"]);
  expect(
    rows
      .filter((r) => r.kind === "arm")
      .map((r) => r.name)
      .sort(),
  ).toEqual(["arm-1", "arm-2", "arm-3"]);
  const primeRow = rows.find((r) => r.name === "prime")!;
  expect(primeRow.session_id).toBe(h.prime!.session_id);
  expect([primeRow.tokens_in, primeRow.tokens_out, primeRow.cost_micro_usd, primeRow.seconds]).toEqual([
    h.prime!.tokens!.input,
    h.prime!.tokens!.output,
    h.prime!.cost_micro_usd,
    h.prime!.seconds,
  ]);
  for (const zero of ["check", "harvest"]) {
    expect(rows.find((r) => r.name === zero)).toMatchObject({
      session_id: h.prime!.session_id,
      tokens_in: 0,
      tokens_out: 0,
      cost_micro_usd: 0,
      ok: 1,
    });
  }
  for (const a of h.arms) {
    const row = rows.find((r) => r.name === `arm-${a.arm}`)!;
    expect(row).toMatchObject({
      session_id: a.session_id!,
      parent_id: h.prime!.session_id,
      agent_session_id: a.agent_session_id!,
      ok: a.verdict === "green" ? 1 : 0,
      status: a.verdict === "green" ? "completed" : "failed",
      tokens_in: a.tokens!.input,
      tokens_out: a.tokens!.output,
      tokens_cache_read: 0,
      tokens_cache_write: 0,
      cost_micro_usd: a.cost_micro_usd,
      seconds: a.seconds,
      cwd: a.cwd,
    });
  }
  // harvest.json on disk is what --json printed.
  expect(JSON.parse(readFileSync(join(h.run_dir, "harvest.json"), "utf8"))).toEqual(h);
}

// -- tests -------------------------------------------------------------------------------

describe("ranking (pure)", () => {
  const arm = (n: number, green: boolean, cost: number | null, seconds: number | null): Rankable => ({
    arm: n,
    green,
    costMicroUsd: cost,
    seconds,
  });
  test("green first, then the cheapest, then the fastest, then the arm number; unknown values last", () => {
    const arms = [
      arm(1, false, 10, 1),
      arm(2, true, 300, 5),
      arm(3, true, 200, 9),
      arm(4, true, 200, 3),
      arm(5, true, null, 1),
      arm(6, true, 200, null),
    ];
    expect(rankArms(arms).map((a) => a.arm)).toEqual([4, 3, 6, 2, 5, 1]);
    expect(arms.map((a) => a.arm)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(compareArms(arm(2, true, 1, 1), arm(1, true, 1, 1))).toBeGreaterThan(0);
    expect(winnerOf(rankArms(arms))?.arm).toBe(4);
    expect(winnerOf(rankArms([arm(1, false, 1, 1)]))).toBeNull();
    expect(winnerOf([])).toBeNull();
  });

  test("the dry batch holds, in process and through the binary (zero tokens, no pi, no git)", async () => {
    const outcome = dryRun();
    expect(outcome.checks.filter((c) => !c.ok)).toEqual([]);
    expect(outcome.ranked.map((a) => a.arm)).toEqual([3, 2, 4, 1, 5]);
    const b = { root: "", repo: tempDir("agentport-bon-dry-"), home: "", spec: "" };
    made.push(b.repo);
    const ran = await bon({ ...b, home: join(b.repo, "home") }, ["--dry-run", "--json"], { AGENTPORT_PI_BIN: "/nonexistent/pi" });
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ ok: true });
    expect(ran.stderr).toContain("the ranking holds");
    // The old spelling still works (hidden from --help).
    const old = await bon({ ...b, home: join(b.repo, "home") }, ["--dry", "--json"], { AGENTPORT_PI_BIN: "/nonexistent/pi" });
    expect(JSON.parse(old.stdout)).toMatchObject({ ok: true });
    expect(readdirSync(b.repo)).toEqual([]);
  });
});

describe("the batch's result becomes its exit code in one place (pure)", () => {
  const clean = { checked: true, changed: [] as string[] };
  const ran = (end: BatchEnd, applied: Applied | null = null, checkout = clean): BonResult => ({
    kind: "ran",
    end,
    harvest: { checkout } as Harvest,
    harvestFile: "",
    applied,
  });
  test("each end and each cause has its documented code", () => {
    expect(exitCodeOf({ kind: "refused", refused: { ok: false, reason: "", dirty: [] } })).toBe(3);
    expect(exitCodeOf(ran({ kind: "winner", arm: 1 }))).toBe(0);
    expect(exitCodeOf(ran({ kind: "winner", arm: 1 }, { ok: true }))).toBe(0);
    expect(exitCodeOf(ran({ kind: "winner", arm: 1 }, { ok: false, reason: "does not apply" }))).toBe(1);
    expect(exitCodeOf(ran({ kind: "no_green" }))).toBe(1);
    expect(exitCodeOf(ran({ kind: "interrupted" }))).toBe(130);
    const stopped = (cause: Cause) => exitCodeOf(ran({ kind: "stopped", cause, reason: "" }));
    expect([stopped("failed"), stopped("supervision"), stopped("environment"), stopped("refused"), stopped("interrupted")]).toEqual([
      1, 4, 5, 3, 130,
    ]);
    // The checkout changed (or could not be read after): 6, whatever the arms came to.
    expect(exitCodeOf(ran({ kind: "winner", arm: 1 }, null, { checked: true, changed: ["planted.txt: untracked (new)"] }))).toBe(6);
    expect(exitCodeOf(ran({ kind: "interrupted" }, null, { checked: false, changed: ["git: exit 128"] }))).toBe(6);
    expect(causeOfVerdict({ status: "stalled", env_fault: false })).toBe("supervision");
    expect(causeOfVerdict({ status: "failed", env_fault: true })).toBe("environment");
    expect(causeOfVerdict({ status: "failed", env_fault: false })).toBe("failed");
  });
});

describe("the check refuses at zero tokens (exit 3) and writes nothing", () => {
  test("outside a git work tree", async () => {
    const b = box();
    const outside = join(b.root, "plain");
    mkdirSync(join(outside, "specs"), { recursive: true });
    writeFileSync(join(outside, "specs", "task.md"), "x\n");
    const ran = await bon(b, [b.spec, ...MODEL], {}, outside);
    expect(ran.code).toBe(3);
    expect(ran.stderr).toContain("is not inside a git work tree");
    expect(existsSync(b.home)).toBe(false);
  });

  test("a dirty tree: the dirty paths are listed; untracked files under specs/ are tolerated", async () => {
    const b = box();
    writeFileSync(join(b.repo, "README.md"), "# edited\n");
    writeFileSync(join(b.repo, "stray.txt"), "x\n");
    writeFileSync(join(b.repo, "specs", "other.md"), "tolerated\n");
    const ran = await bon(b, [b.spec, ...MODEL, "--json"]);
    expect(ran.code).toBe(3);
    expect(ran.stderr).toContain("the work tree is not clean");
    expect(ran.stderr).toContain(" M README.md");
    expect(ran.stderr).toContain("?? stray.txt");
    expect(ran.stderr).not.toContain("other.md");
    expect(JSON.parse(ran.stdout)).toEqual({ refused: true, reason: expect.any(String), dirty: [" M README.md", "?? stray.txt"] });
    expect(existsSync(b.home)).toBe(false);
    expect(readFileSync(join(b.repo, "README.md"), "utf8")).toBe("# edited\n");
  });

  test("an empty spec, a missing spec", async () => {
    const b = box();
    writeFileSync(join(b.repo, "specs", "empty.md"), "  \n");
    const empty = await bon(b, ["specs/empty.md", ...MODEL]);
    expect(empty.code).toBe(3);
    expect(empty.stderr).toContain("the spec specs/empty.md is empty");
    const missing = await bon(b, ["specs/nope.md", ...MODEL]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("does not exist");
    expect(existsSync(b.home)).toBe(false);
  });

  test("a state folder inside the tree that git does not ignore (git clean would take it)", async () => {
    const b = box();
    const ran = await bon(b, [b.spec, ...MODEL], { AGENTPORT_HOME: join(b.repo, ".state") });
    expect(ran.code).toBe(3);
    expect(ran.stderr).toContain("is inside the work tree and not ignored by git");
    expect(existsSync(join(b.repo, ".state"))).toBe(false);
  });

  test("usage errors (exit 2): the number of arms, --jobs without --parallel, no spec", async () => {
    const b = box();
    expect((await bon(b, [b.spec, "--arms", "6"])).code).toBe(2);
    expect((await bon(b, [b.spec, "--arms", "2", "--models", "a/b,c/d,e/f"])).code).toBe(2);
    expect((await bon(b, [b.spec, "--jobs", "2"])).code).toBe(2);
    expect((await bon(b, [])).code).toBe(2);
    expect(existsSync(b.home)).toBe(false);
  });
});

describe("--demo", () => {
  test("writes the demo spec under the spec folder, once; the check then tolerates it", async () => {
    const b = box();
    const first = await bon(b, ["--demo"]);
    expect(first.code).toBe(0);
    const file = join(b.repo, "specs", "bon-demo.md");
    expect(first.stdout.trim()).toBe(file);
    expect(readFileSync(file, "utf8")).toContain("wordCount(text: string): number");
    expect(first.stderr).toContain("agentport bon specs/bon-demo.md");
    expect((await bon(b, ["--demo"])).code).toBe(0);
    writeFileSync(file, "mine\n");
    const again = await bon(b, ["--demo"]);
    expect(again.code).toBe(2);
    expect(readFileSync(file, "utf8")).toBe("mine\n");
    expect(statusLines(b.repo)).toEqual(["?? specs/bon-demo.md", "?? specs/task.md"]);
    expect(existsSync(b.home)).toBe(false);
  });
});

describe("a full batch against the fake pi", () => {
  test("one after the other in one workspace: one pi process, clones of the prime; green, red by a gate, red by an invalid envelope", async () => {
    const b = box();
    // --models: arm 2 runs on another model (set_model after its clone; judged against it).
    const scenario = { turns: [PRIME, ARM_GREEN, ARM_RED_GATE, ARM_INVALID], models: ["standin/other-model"] };
    const models = ["--models", "standin/standin-model,standin/other-model,standin/standin-model"];
    const ran = await bon(b, [b.spec, ...MODEL, ...models, ...GATE, "--json", "--progress", "lines"], {
      AGENTPORT_FAKE_SCENARIO: JSON.stringify(scenario),
    });
    expect(ran.code).toBe(0);
    const h = readHarvest(ran.stdout);
    expect(h.mode).toBe("sequential");
    expectBatch(b, h);
    expect(h.arms.map((a) => [a.arm, a.model])).toEqual([
      [1, "standin/standin-model"],
      [3, "standin/standin-model"],
      [2, "standin/other-model"],
    ]);
    expect(readFileSync(h.arms[2]!.session_file!, "utf8")).toContain('"modelId":"other-model"');
    // One workspace in the run folder, never the checkout; removed at the end.
    const shared = join(h.run_dir, "workspaces", "shared");
    for (const a of h.arms) expect(a.cwd).toBe(shared);
    expect(existsSync(join(h.run_dir, "workspaces"))).toBe(false);
    // One process: every clone's file says the prime's folder and comes from the prime.
    for (const a of h.arms) {
      const header = JSON.parse(readFileSync(a.session_file!, "utf8").split("\n")[0]!);
      expect(header).toMatchObject({ cwd: shared, parentSession: h.prime!.session_file });
    }
    expect(ran.stderr).toContain("bon: check ok");
    expect(ran.stderr).toContain("pi arm 2: tool write answer.txt");
    expect(ran.stderr).toMatch(/rank\s+arm\s+agent\s+model\s+verdict/);
    expect(ran.stderr).toContain("paid once — 3 independent runs would have paid it 3 times");
    expect(ran.stderr).toContain(`git apply --index ${h.winner!.patch}`);
  }, 60_000);

  test("from agentport.json: --as names the pi agent, the config's gates and model apply when no flag gives them", async () => {
    const b = box();
    // The config is committed, so the tree is clean; its gates are the same two checks.
    writeFileSync(
      join(b.repo, "agentport.json"),
      JSON.stringify({
        gates: { readme: "test -f README.md", answer: ["grep", "-qx", "42", "answer.txt"] },
        agents: { builder: { agent: "pi", model: "standin/standin-model", direct: true } },
      }),
    );
    git(b.repo, "add", "agentport.json");
    git(b.repo, "commit", "-qm", "config");
    // A found config applies once trusted.
    expect(
      Bun.spawnSync([BIN, "trust"], { cwd: b.repo, env: { ...process.env, AGENTPORT_HOME: b.home, AGENTPORT_CONFIG: "" } }).exitCode,
    ).toBe(0);
    const scenario = { turns: [PRIME, ARM_GREEN, ARM_RED_GATE] };
    const ran = await bon(b, [b.spec, "--as", "builder", "--arms", "2", "--json"], { AGENTPORT_FAKE_SCENARIO: JSON.stringify(scenario) });
    expect(ran.code).toBe(0);
    const h = readHarvest(ran.stdout);
    expect(h.arms.map((a) => [a.arm, a.verdict])).toEqual([
      [1, "green"],
      [2, "red"],
    ]);
    expect(h.arms[1]!.reason).toContain("grep -qx 42 answer.txt");
    expect(h.arms.every((a) => a.model === "standin/standin-model")).toBe(true);
    // --as names the batch's agent; a claude agent cannot run a batch --agent pi asks for: one line, exit 2.
    writeFileSync(join(b.root, "other.json"), JSON.stringify({ agents: { reviewer: { agent: "claude" } } }));
    const refused = await bon(b, [b.spec, "--agent", "pi", "--config", join(b.root, "other.json"), "--as", "reviewer"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("reviewer");
  }, 60_000);

  test("in parallel: each arm a `pi --fork` of the prime in a workspace of its own, removed at the end", async () => {
    const b = box();
    const wrapper = perPhase(b, { prime: PRIME, "arm-1": ARM_GREEN, "arm-2": ARM_RED_GATE, "arm-3": ARM_INVALID });
    const ran = await bon(b, [b.spec, ...MODEL, ...GATE, "--parallel", "--jobs", "2", "--json"], { AGENTPORT_PI_BIN: wrapper });
    expect(ran.code).toBe(0);
    const h = readHarvest(ran.stdout);
    expect(h.mode).toBe("parallel");
    expectBatch(b, h);
    for (const a of h.arms) {
      expect(a.cwd).toBe(join(h.run_dir, "workspaces", `arm-${a.arm}`));
      // A fork: a copy of the prime in the arm's own folder.
      const header = JSON.parse(readFileSync(a.session_file!, "utf8").split("\n")[0]!);
      expect(header).toMatchObject({ cwd: a.cwd, parentSession: h.prime!.session_file });
    }
    expect(git(b.repo, "worktree", "list", "--porcelain").match(/^worktree /gm)?.length).toBe(1);
    expect(existsSync(join(b.repo, ".git", "worktrees")) ? readdirSync(join(b.repo, ".git", "worktrees")) : []).toEqual([]);
    expect(existsSync(join(h.run_dir, "workspaces"))).toBe(false);
  }, 60_000);

  test("no arm green: exit 1, no winner, the tree as found", async () => {
    const b = box();
    const ran = await bon(b, [b.spec, ...MODEL, "--arms", "2", "--gate", "false", "--json"], {
      AGENTPORT_FAKE_SCENARIO: JSON.stringify({ turns: [PRIME, ARM_GREEN] }),
    });
    expect(ran.code).toBe(1);
    const h = readHarvest(ran.stdout);
    expect(h.winner).toBeNull();
    expect(h.arms.map((a) => a.verdict)).toEqual(["red", "red"]);
    expect(ran.stderr).toContain("no arm is green");
    expect(statusLines(b.repo)).toEqual(["?? specs/task.md"]);
    const harvestRow = ledgerRows(b.home, h.batch_id).at(-1)!;
    expect(harvestRow).toMatchObject({ name: "harvest", ok: 0, status: "failed" });
  }, 60_000);

  test("a prime that writes fails the batch before any arm; it wrote in its workspace, which is removed", async () => {
    const b = box();
    const writing = [{ writeFile: { path: "oops.txt", content: "x\n" } }, envelope("Read it.", [])];
    const ran = await bon(b, [b.spec, ...MODEL, "--json"], { AGENTPORT_FAKE_SCENARIO: JSON.stringify({ turns: [writing, ARM_GREEN] }) });
    expect(ran.code).toBe(1);
    const h = readHarvest(ran.stdout);
    expect(h.prime).toMatchObject({ ok: false });
    expect(h.prime!.reason).toContain("the prime changed its workspace (?? oops.txt)");
    expect(h.stopped).toContain("the prime failed");
    expect(h.arms).toEqual([]);
    expect(statusLines(b.repo)).toEqual(["?? specs/task.md"]);
    expect(ledgerRows(b.home, h.batch_id).map((r) => [r.kind, r.name, r.ok])).toEqual([
      ["check", "check", 1],
      ["prime", "prime", 0],
      ["workspace", "shared", 1],
      ["harvest", "harvest", 0],
    ]);
  }, 60_000);

  test("Ctrl-C during an arm: its turn is aborted, harvested, no new arm starts, pi is gone (exit 130)", async () => {
    const b = box();
    const pidFile = join(b.root, "grandchild.pid");
    const hanging = [{ writeFile: { path: "answer.txt", content: "42\n" } }, { grandchild: pidFile }, { hang: true, ignoreTerm: false }];
    const proc = Bun.spawn([BIN, "bon", b.spec, ...MODEL, "--json", "--no-isolate"], {
      cwd: b.repo,
      env: {
        ...process.env,
        NO_COLOR: "1",
        AGENTPORT_HOME: b.home,
        AGENTPORT_PI_BIN: fake,
        AGENTPORT_FAKE_SCENARIO: JSON.stringify({ turns: [PRIME, hanging] }),
      },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = new Response(proc.stdout).text();
    const err = new Response(proc.stderr).text();
    const until = performance.now() + 20_000;
    while (!existsSync(pidFile) || readFileSync(pidFile, "utf8") === "") {
      if (performance.now() > until) throw new Error(`no grandchild: ${await err}`);
      await Bun.sleep(20);
    }
    // The arm writes in the workspace, never in the checkout.
    expect(existsSync(join(b.repo, "answer.txt"))).toBe(false);
    proc.kill("SIGINT");
    const code = await proc.exited;
    expect(code).toBe(130);
    const h = readHarvest(await out);
    expect(h.interrupted).toBe(true);
    expect(h.arms.map((a) => [a.arm, a.verdict, a.status])).toEqual([
      [1, "red", "aborted"],
      [2, "not_run", null],
      [3, "not_run", null],
    ]);
    expect(h.arms[0]!.patch_bytes).toBeGreaterThan(0);
    expect(statusLines(b.repo)).toEqual(["?? specs/task.md"]);
    // The arm's pi process group went with the batch.
    expect(await waitGone(Number(readFileSync(pidFile, "utf8")), 3_000)).toBe(true);
  }, 60_000);
});
