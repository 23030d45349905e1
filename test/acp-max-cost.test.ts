// `--max-cost` with `--agent acp`: ACP has no standard cost, so a bound is
// taken only for an ACP agent known to report its cost (opencode's `acp`,
// claude-agent-acp); any other command is refused before anything starts
// (exit 2, one line, no session declared, no agent spawned), from a flag, the
// roster and `agentport acp` alike. Known agents are presented by scripts
// named as the real programs that run the fake ACP agent.
import { beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema } from "../src/core/verdict.ts";
import { agentport, BIN, tempDir } from "./helpers.ts";

let dir: string;
let bin: string;
const home = () => join(dir, "home");

/** A script named `name` that runs the fake ACP agent, whatever its arguments. */
function program(name: string): string {
  const path = join(bin, name);
  writeFileSync(path, `#!/bin/sh\nexec ${JSON.stringify(BIN)} fake-acp "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

beforeAll(() => {
  dir = tempDir("agentport-acp-cost-");
  bin = join(dir, "bin");
  mkdirSync(bin);
  program("opencode");
  program("claude-agent-acp");
  program("fake-acp-other");
});

async function run(args: string[], scenario = "text", cwd?: string) {
  const work = cwd ?? tempDir("agentport-acp-cost-w-");
  const log = join(work, ".fake.log");
  const ran = await agentport(["run", "--agent", "acp", "--json", "--progress", "off", ...args, "go"], {
    cwd: work,
    env: { AGENTPORT_HOME: home(), AGENTPORT_FAKE_SCENARIO: scenario, AGENTPORT_FAKE_LOG: log },
  });
  return { ...ran, spawned: existsSync(log) };
}

async function sessionCount(): Promise<number> {
  const listed = await agentport(["sessions", "--json", "--all"], { env: { AGENTPORT_HOME: home() } });
  if (listed.code !== 0) return 0;
  return (JSON.parse(listed.stdout) as unknown[]).length;
}

/** Refused before the start: exit 2, one line saying how to allow it, nothing declared, nothing spawned. */
async function expectRefused(
  ran: { code: number; stdout: string; stderr: string; spawned: boolean },
  before: number,
  label = "--max-cost",
) {
  expect(ran.code).toBe(2);
  expect(ran.spawned).toBe(false);
  const lines = ran.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(label);
  expect(lines[0]).toContain("--max-tokens");
  expect(lines[0]).toContain("opencode acp");
  expect(await sessionCount()).toBe(before);
}

const costly = JSON.stringify({ steps: [{ text: "Costly." }, { usage: { cost: 0.0125 } }, { hang: true }] });

describe("--max-cost with --agent acp: only an agent known to report its cost", () => {
  test("an ACP agent not known to report cost: refused before the start", async () => {
    const before = await sessionCount();
    await expectRefused(await run(["--acp-command", join(bin, "fake-acp-other"), "--max-cost", "1"]), before);
  });

  test("opencode's name hidden behind a shell is not recognised (allow-list, fail safe)", async () => {
    const before = await sessionCount();
    await expectRefused(await run(["--acp-command", `sh -c ${join(bin, "opencode")}`, "--max-cost", "1"]), before);
    // opencode without its `acp` subcommand is not the ACP agent the ground truth measured.
    await expectRefused(await run(["--acp-command", `${join(bin, "opencode")} serve`, "--max-cost", "1"]), before);
  });

  test("opencode acp (by path): allowed, and its reported cost stops the run", async () => {
    const ran = await run(["--acp-command", `${join(bin, "opencode")} acp`, "--max-cost", "0.01"], costly);
    const verdict = VerdictSchema.parse(JSON.parse(ran.stdout));
    expect({ status: verdict.status, cause: verdict.failure?.cause, source: verdict.cost_source }).toEqual({
      status: "over_budget",
      cause: "cost",
      source: "reported",
    });
  });

  test("claude-agent-acp: allowed; an allowed agent that still reports no cost is said to be unbounded", async () => {
    const ran = await run(["--acp-command", join(bin, "claude-agent-acp"), "--max-cost", "5"]);
    expect(ran.code).toBe(0);
    expect(VerdictSchema.parse(JSON.parse(ran.stdout)).cost_source).toBe("unknown");
    expect(ran.stderr).toContain("--max-cost: the ACP agent reported no cost, so the run was not bounded by cost");
  });

  test("a roster entry follows the same rule", async () => {
    const work = tempDir("agentport-acp-cost-r-");
    const agents = {
      other: { agent: "acp", acp_command: [join(bin, "fake-acp-other")], max_cost: 1 },
      oc: { agent: "acp", acp_command: [join(bin, "opencode"), "acp"], max_cost: 0.01 },
    };
    const config = join(work, "agentport.json");
    writeFileSync(config, JSON.stringify({ agents }));
    const before = await sessionCount();
    const refused = await agentport(["run", "--config", config, "--as", "other", "--json", "--progress", "off", "go"], {
      cwd: work,
      env: { AGENTPORT_HOME: home(), AGENTPORT_FAKE_LOG: join(work, ".fake.log") },
    });
    await expectRefused({ ...refused, spawned: existsSync(join(work, ".fake.log")) }, before, "max_cost (agentport.json)");
    const allowed = await agentport(["run", "--config", config, "--as", "oc", "--json", "--progress", "off", "go"], {
      cwd: work,
      env: { AGENTPORT_HOME: home(), AGENTPORT_FAKE_SCENARIO: costly },
    });
    expect(VerdictSchema.parse(JSON.parse(allowed.stdout)).status).toBe("over_budget");
  });

  test("agentport acp --agent acp: refused before a word is spoken", async () => {
    const before = await sessionCount();
    const work = tempDir("agentport-acp-cost-s-");
    const ran = await agentport(["acp", "--agent", "acp", "--acp-command", join(bin, "fake-acp-other"), "--max-cost", "1"], {
      cwd: work,
      env: { AGENTPORT_HOME: home(), AGENTPORT_FAKE_LOG: join(work, ".fake.log") },
      stdin: "",
    });
    await expectRefused({ ...ran, spawned: existsSync(join(work, ".fake.log")) }, before);
  });
});
