// `agentport bon` with every agent and across agents, against the fake agents
// built into the binary (each through a wrapper that gives it its scenario):
// claude, codex and gemini run each arm through `run`'s path: claude's arms
// fork one prime (arms_from "fork"), codex's and gemini's start from the spec
// (no prime); `--arms pi,claude,codex` is one arm per agent, from the spec;
// bad `--arms` is one line and exit 2. Also: a dialog refused inside a pi RPC
// arm is in harvest.json, not lost. The real claude: test/bon-claude.test.ts.
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HarvestSchema } from "../src/bon/harvest-schema.ts";
import { waitGone } from "../src/io/proc.ts";
import { BIN } from "./helpers.ts";
import { bon, box, envelope, ledgerRows, MODEL, PRIME, readHarvest, statusLines, useFakePi, type Box, type Json } from "./bon-fixture.ts";

useFakePi();

const ENVELOPE = { status: "success", summary: "Wrote the answer.", changed_files: ["answer.txt"] };
const fenced = `Done.\n\`\`\`json\n${JSON.stringify(ENVELOPE)}\n\`\`\``;

/** Each fake's scenario for one arm that writes answer.txt (claude: 42, by a real shell command; codex and gemini: a pid) and hands over its envelope. */
const SCENARIOS: Record<string, Json> = {
  claude: {
    steps: [
      { tool: { name: "Write", input: { file_path: "answer.txt" }, run: "echo 42 > answer.txt" } },
      { text: fenced },
      { result: { text: fenced, cost_usd: 0.0123 } },
    ],
  },
  codex: { steps: [{ grandchild: "answer.txt" }, { text: fenced }, { done: true }] },
  gemini: { steps: [{ grandchild: "answer.txt" }, { text: fenced }, { done: true }] },
  pi: {
    steps: [
      { writeFile: { path: "answer.txt", content: "42\n" }, usage: { input: 1000, output: 30 } },
      envelope("Wrote 42.", ["answer.txt"], { input: 1100, output: 20 }),
    ],
  },
};

/** A wrapper per agent that runs its fake with its scenario; the fakes beside them (an isolated arm sees this folder). */
function fakes(b: Box, scenarios: Record<string, Json>): Record<string, string> {
  const dir = join(b.root, "fakes");
  mkdirSync(dir, { recursive: true });
  const env: Record<string, string> = {};
  for (const [agent, scenario] of Object.entries(scenarios)) {
    writeFileSync(join(dir, `${agent}.json`), JSON.stringify(scenario));
    if (!existsSync(join(dir, `fake-${agent}`))) symlinkSync(BIN, join(dir, `fake-${agent}`));
    const wrapper = join(dir, agent);
    writeFileSync(wrapper, `#!/bin/sh\nAGENTPORT_FAKE_SCENARIO="${dir}/${agent}.json" exec "${dir}/fake-${agent}" "$@"\n`);
    chmodSync(wrapper, 0o755);
    env[`AGENTPORT_${agent.toUpperCase()}_BIN`] = wrapper;
  }
  return env;
}

const GATE = ["--gate", "test -s answer.txt"];

/** What every batch from the spec shows: no prime, every arm green with its agent, its cost's source, its own run in the ledger under the batch's run id. */
function expectFromSpec(b: Box, h: Json, agents: string[]) {
  expect(HarvestSchema.safeParse(h).success).toBe(true);
  expect(statusLines(b.repo)).toEqual(["?? specs/task.md"]);
  expect(h).toMatchObject({ arms_from: "spec", prime: null, prime_paid: null });
  expect(h.arms.map((a: Json) => [a.arm, a.agent, a.verdict]).sort()).toEqual(agents.map((agent, i) => [i + 1, agent, "green"]));
  const rows = ledgerRows(b.home, h.batch_id);
  for (const a of h.arms) {
    expect(a.run_session_id).toEqual(expect.any(String));
    expect(a.refused).toEqual([]);
    // The arm's own run (kind "run"), in the batch's run id, holds its tokens and cost; bon's arm phase does not count them again.
    const run = rows.find((r) => r.session_id === a.run_session_id)!;
    expect(run).toMatchObject({ kind: "run", cwd: a.cwd, cost_micro_usd: a.cost_micro_usd });
    expect(rows.find((r) => r.name === `arm-${a.arm}`)).toMatchObject({
      kind: "arm",
      ok: 1,
      cost_micro_usd: null,
      tokens_in: null,
      parent_id: rows.find((r) => r.name === "check")!.session_id,
    });
  }
  expect(rows.some((r) => r.kind === "prime")).toBe(false);
}

describe("bon --agent codex|gemini: each arm through run's path, from the spec", () => {
  for (const agent of ["codex", "gemini"]) {
    test(agent, async () => {
      const b = box();
      // gemini works only in a folder it trusts: a workspace is agentport's clone of the checkout, trusted as `run` would trust it.
      const env = { ...fakes(b, { [agent]: SCENARIOS[agent]! }), GEMINI_CLI_TRUST_WORKSPACE: "true" };
      const ran = await bon(b, [b.spec, "--agent", agent, "--arms", "2", ...GATE, "--json", "--progress", "off"], env);
      expect(ran.stderr).toContain("each from the spec (no prime)");
      expect(ran.code).toBe(0);
      const h = readHarvest(ran.stdout) as unknown as Json;
      expect(h.agent).toBe(agent);
      expectFromSpec(b, h, [agent, agent]);
      // The fake codex's and gemini's model has no price: unknown (claude reports its cost: below).
      for (const a of h.arms) expect([a.cost_source, a.cost_micro_usd]).toEqual(["unknown", null]);
    }, 60_000);
  }
});

describe("bon --agent claude: the prime paid once, each arm a fork of it (--resume PRIME --fork-session)", () => {
  const reading = `Read it.\n\`\`\`json\n${JSON.stringify({ status: "success", summary: "I will write 42 to answer.txt.", changed_files: [] })}\n\`\`\``;
  // The fake claude plays `resumed` on --resume: the arms' turn; a new session plays the prime's.
  const scenario = { steps: [{ text: reading }, { result: { text: reading, cost_usd: 0.05 } }], resumed: SCENARIOS.claude!.steps };

  test("one workspace: arms_from fork, the prime's cost once, each arm's run a new session forked from the prime's", async () => {
    const b = box();
    const ran = await bon(
      b,
      [b.spec, "--agent", "claude", "--arms", "2", ...GATE, "--json", "--progress", "off"],
      fakes(b, { claude: scenario }),
    );
    expect(ran.code).toBe(0);
    const h = readHarvest(ran.stdout) as unknown as Json;
    expect(HarvestSchema.safeParse(h).success).toBe(true);
    expect(h).toMatchObject({
      agent: "claude",
      arms_from: "fork",
      prime: { ok: true, agent: "claude", cost_micro_usd: 50_000, cost_source: "reported", summary: "I will write 42 to answer.txt." },
    });
    expect(h.prime_paid).toMatchObject({ arms: 2, cost_micro_usd_once: 50_000, cost_micro_usd_saved: 50_000 });
    expect(h.arms.map((a: Json) => a.verdict)).toEqual(["green", "green"]);
    const db = new Database(join(b.home, "ledger.sqlite"), { readonly: true });
    const runDir = (session: string) =>
      db.query<{ run_dir: string }, [string]>("SELECT run_dir FROM phases WHERE session_id = ?").get(session)!.run_dir;
    const primeRun = h.prime.run_session_id;
    for (const a of h.arms) {
      const argv: string[] = JSON.parse(readFileSync(join(runDir(a.run_session_id), "argv.json"), "utf8")).argv;
      expect(argv.join(" ")).toContain(`--resume ${primeRun} --fork-session --session-id ${a.run_session_id}`);
      expect(a.run_session_id).not.toBe(primeRun);
    }
    // The prime's and the arms' tokens and cost are on their runs' phases only (the batch's run id), counted once.
    const costs = ledgerRows(b.home, h.batch_id).filter((r) => (r.cost_micro_usd ?? 0) > 0);
    expect(costs.map((r) => [r.kind, r.cost_micro_usd])).toEqual([
      ["run", 50_000],
      ["run", 12_300],
      ["run", 12_300],
    ]);
    db.close();
  }, 60_000);

  test("--parallel: a fork would stay in the prime's folder, so each arm starts from the spec", async () => {
    const b = box();
    const ran = await bon(
      b,
      [b.spec, "--agent", "claude", "--arms", "2", "--parallel", ...GATE, "--json", "--progress", "off"],
      fakes(b, { claude: SCENARIOS.claude! }),
    );
    expect(ran.code).toBe(0);
    expect(readHarvest(ran.stdout)).toMatchObject({ arms_from: "spec", prime: null, mode: "parallel" });
  }, 60_000);
});

describe("bon --arms pi,claude,codex: a cross-agent batch, one arm per agent", () => {
  test("the same spec, gates and ranking; each arm its agent and model", async () => {
    const b = box();
    const env = fakes(b, SCENARIOS);
    const ran = await bon(
      b,
      [b.spec, "--arms", "pi:standin/standin-model,claude:sonnet,codex", ...GATE, "--json", "--progress", "off"],
      env,
    );
    expect(ran.code).toBe(0);
    const h = readHarvest(ran.stdout) as unknown as Json;
    expect(h.agent).toBeNull();
    expectFromSpec(b, h, ["pi", "claude", "codex"]);
    const byArm = (k: number) => h.arms.find((a: Json) => a.arm === k);
    expect([byArm(1).model, byArm(2).model, byArm(3).model]).toEqual(["standin/standin-model", "sonnet", null]);
    expect(byArm(1).tokens.input).toBeGreaterThan(0);
    // How each cost was known: claude reports it; the fake codex's model has no price.
    expect([byArm(2).cost_source, byArm(2).cost_micro_usd, byArm(3).cost_source, byArm(3).cost_micro_usd]).toEqual([
      "reported",
      12_300,
      "unknown",
      null,
    ]);
    expect(ran.stderr).toMatch(/rank\s+arm\s+agent\s+model/);
  }, 90_000);

  test("an agent list of one agent is that agent's batch (pi: clones of one prime)", async () => {
    const b = box();
    const scenario = { turns: [PRIME, SCENARIOS.pi!.steps, SCENARIOS.pi!.steps] };
    const ran = await bon(
      b,
      [b.spec, "--arms", "pi:standin/standin-model,pi:standin/standin-model", "--direct", ...GATE, "--json", "--progress", "off"],
      { AGENTPORT_FAKE_SCENARIO: JSON.stringify(scenario) },
    );
    expect(ran.code).toBe(0);
    const h = readHarvest(ran.stdout) as unknown as Json;
    expect(h).toMatchObject({ agent: "pi", arms_from: "clone", prime: { ok: true, agent: "pi" } });
    // The prime's line counts its tokens as one number, as each arm's does.
    expect(ran.stderr).toMatch(/bon: prime — ok; \d+ tokens, \$/);
    expect(ran.stderr).not.toContain("[object Object]");
  }, 60_000);
});

describe("bad --arms: one line, exit 2, nothing written", () => {
  const cases: [string[], string][] = [
    [["--arms", "pi,bard"], `--arms: "bard" is not an agent or agent:model`],
    [["--arms", "pi,claude:"], `--arms: "claude:" is not an agent or agent:model`],
    [["--arms", "pi,,codex"], `--arms: "" is not an agent or agent:model`],
    [["--arms", "0"], "--arms must be a positive count"],
    [["--arms", "pi,claude", "--agent", "codex"], "--arms names each arm's agent: leave out --agent"],
    [["--arms", "pi,claude", "--model", "m"], "--model is one agent's"],
    [["--arms", "pi,claude,codex,gemini,opencode,pi"], "a batch has 2 to 5 arms, not 6"],
    [["--agent", "acp"], "--agent"],
    // A setting an arm's agent cannot take is refused as `run` refuses it, before anything starts.
    [["--agent", "codex", "--max-turns", "3"], "codex has no turn limit"],
    [["--arms", "claude,codex", "--max-turns", "3"], "codex has no turn limit"],
  ];
  for (const [args, line] of cases) {
    test(args.join(" "), async () => {
      const b = box();
      const ran = await bon(b, [b.spec, ...args]);
      expect(ran.code).toBe(2);
      expect(ran.stderr).toContain(line);
      expect(ran.stderr.trim().split("\n")).toHaveLength(1);
      expect(existsSync(b.home)).toBe(false);
    });
  }
});

describe("Ctrl-C during an arm run through run's path", () => {
  test("its run is aborted, no new arm starts, the agent's tree is gone (exit 130)", async () => {
    const b = box();
    const pidFile = join(b.root, "grandchild.pid");
    const env = fakes(b, { codex: { steps: [{ grandchild: pidFile }, { hang: true }] } });
    const proc = Bun.spawn([BIN, "bon", b.spec, "--agent", "codex", "--arms", "2", "--json", "--no-isolate", "--progress", "off"], {
      cwd: b.repo,
      env: { ...process.env, NO_COLOR: "1", AGENTPORT_HOME: b.home, ...env },
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
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(130);
    const h = readHarvest(await out) as unknown as Json;
    expect(h.interrupted).toBe(true);
    expect(h.arms.map((a: Json) => [a.arm, a.verdict, a.status])).toEqual([
      [1, "red", "aborted"],
      [2, "not_run", null],
    ]);
    expect(ledgerRows(b.home, h.batch_id).find((r) => r.session_id === h.arms[0].run_session_id)).toMatchObject({
      kind: "run",
      status: "aborted",
    });
    expect(await waitGone(Number(readFileSync(pidFile, "utf8")), 3_000)).toBe(true);
  }, 60_000);
});

describe("refused requests are recorded per arm", () => {
  test("a dialog refused inside a pi RPC arm is in harvest.json and the arm's reason, not lost", async () => {
    const b = box();
    // The arm's write is guarded by a confirm dialog: the client refuses it, the tool fails, the arm writes nothing.
    const guarded = [
      { confirm: { title: "Write answer.txt?", message: "Allow the write", reason: "Blocked by user" } },
      ...SCENARIOS.pi!.steps,
    ];
    const scenario = { turns: [PRIME, guarded, SCENARIOS.pi!.steps] };
    const ran = await bon(b, [b.spec, ...MODEL, "--arms", "2", ...GATE, "--json", "--progress", "off"], {
      AGENTPORT_FAKE_SCENARIO: JSON.stringify(scenario),
    });
    const h = readHarvest(ran.stdout) as unknown as Json;
    const arm1 = h.arms.find((a: Json) => a.arm === 1);
    expect(arm1.refused).toEqual([{ kind: "dialog", subject: expect.stringContaining("Write answer.txt?") }]);
    expect(arm1.verdict).toBe("red");
    expect(arm1.reason).toContain("1 request refused (dialog: ");
    expect(h.arms.find((a: Json) => a.arm === 2)).toMatchObject({ verdict: "green", refused: [] });
    expect(h.prime).toMatchObject({ refused: [], cost_source: "reported" });
    expect(arm1.cost_source).toBe("reported");
  }, 60_000);
});
