// The contract: every `--json` output, progress line and harvest.json of the
// fake agents validates against the schema `agentport schema NAME` prints (a
// real validator, ajv, draft 2020-12), and schemas/ is that output.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { agentport, fakeProject, ROOT, type FakeProject } from "./helpers.ts";
import { bon, box, envelope, MODEL, PRIME, useFakePi } from "./bon-fixture.ts";
import { problems, SCHEMA_FILES as NAMES } from "./schemas.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
useFakePi();

const jsonLines = (text: string): unknown[] =>
  text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));

function world(): FakeProject {
  const w = fakeProject("agentport-contract-", { GEMINI_CLI_TRUST_WORKSPACE: "true" });
  made.push(w.root);
  return w;
}

describe("schemas/", () => {
  test("agentport schema lists the names and prints each file under schemas/ as it is", async () => {
    const listed = await agentport(["schema", "--json"]);
    expect(listed.code).toBe(0);
    expect(Object.keys(JSON.parse(listed.stdout))).toEqual(NAMES);
    for (const name of NAMES) {
      const printed = await agentport(["schema", name]);
      expect(printed.code).toBe(0);
      expect(`${printed.stdout}`).toBe(readFileSync(join(ROOT, "schemas", `${name}.json`), "utf8"));
    }
  });

  test("an unknown name is a usage error, one line", async () => {
    const ran = await agentport(["schema", "verdicts"]);
    expect(ran.code).toBe(2);
    expect(ran.stdout).toBe("");
    expect(ran.stderr.trim().split("\n")).toHaveLength(1);
    expect(ran.stderr).toContain("verdict, progress");
  });

  test("the validator refuses what breaks the contract", () => {
    expect(problems("verdict", { agent: "claude" }).length).toBeGreaterThan(0);
    expect(problems("progress", { schema_version: 1, ts: "t", session_id: null, agent: "pi", kind: "telepathy" }).length).toBeGreaterThan(
      0,
    );
    expect(problems("config", { agents: { a: { agent: "claude", timeout: "soon" } } }).length).toBeGreaterThan(0);
  });
});

describe("every --json output validates", () => {
  const w = world();

  test.each(["claude", "pi", "codex", "gemini", "opencode"])(
    "run --agent %s: the verdict, each --progress json line, show --json",
    async (agent) => {
      const ran = await agentport(["run", "--agent", agent, "--json", "--progress", "json", "Say hello"], { cwd: w.proj, env: w.env });
      expect(ran.code).toBe(0);
      const verdict = JSON.parse(ran.stdout);
      expect(verdict.schema_version).toBe(1);
      expect(problems("verdict", verdict)).toEqual([]);
      const records = jsonLines(ran.stderr) as { kind: string; schema_version: number }[];
      expect(records.at(-1)?.kind).toBe("verdict");
      expect(records.length).toBeGreaterThan(1);
      for (const record of records) {
        expect(record.schema_version).toBe(1);
        expect(problems("progress", record)).toEqual([]);
      }
      const shown = await agentport(["show", verdict.session_id, "--json"], { cwd: w.proj, env: w.env });
      expect(shown.code).toBe(0);
      expect(problems("session", JSON.parse(shown.stdout))).toEqual([]);
    },
  );

  test("failed and refused runs: the verdict of a failure, a pre-flight refusal and a replay", async () => {
    const failed = await agentport(["run", "--agent", "codex", "--json", "--progress", "off", "go"], {
      cwd: w.proj,
      env: { ...w.env, AGENTPORT_FAKE_SCENARIO: "auth" },
    });
    expect(failed.code).toBe(5);
    expect(problems("verdict", JSON.parse(failed.stdout))).toEqual([]);
    const usage = await agentport(["run", "--agent", "claude", "--json", "--timeout", "soon", "go"], { cwd: w.proj, env: w.env });
    expect(usage.code).toBe(2);
    expect(problems("verdict", JSON.parse(usage.stdout))).toEqual([]);
    const fixture = join(ROOT, "test", "fixtures", "claude", "b-tools.tools.jsonl");
    const replayed = await agentport(["replay", "--agent", "claude", "--json", "--progress", "json", fixture]);
    expect(problems("verdict", JSON.parse(replayed.stdout))).toEqual([]);
    for (const record of jsonLines(replayed.stderr)) expect(problems("progress", record)).toEqual([]);
  });

  test("sessions --json: each line a session, each of its phases a phase", async () => {
    const listed = await agentport(["sessions", "--json"], { cwd: w.proj, env: w.env });
    expect(listed.code).toBe(0);
    const sessions = jsonLines(listed.stdout) as { phases: unknown[] }[];
    expect(sessions.length).toBeGreaterThanOrEqual(5);
    for (const session of sessions) {
      expect(problems("session", session)).toEqual([]);
      for (const phase of session.phases) expect(problems("phase", phase)).toEqual([]);
    }
  });

  test("agentport.json with a $schema key: valid for the schema and for the binary", async () => {
    const config = {
      $schema: "./node_modules/agentport/schemas/config.json",
      default_agent: "helper",
      agents: { helper: { agent: "claude", timeout: 60, tools: ["read"] } },
    };
    expect(problems("config", config)).toEqual([]);
    await Bun.write(join(w.proj, "agentport.json"), JSON.stringify(config));
    const shown = await agentport(["config", "--json"], {
      cwd: w.proj,
      env: { ...w.env, AGENTPORT_CONFIG: join(w.proj, "agentport.json") },
    });
    expect(shown.code).toBe(0);
  });
});

test("bon --json: harvest.json validates", async () => {
  const b = box();
  const arm = [envelope("Wrote 42.", ["answer.txt"], { input: 1000, output: 20 })];
  const ran = await bon(b, [b.spec, ...MODEL, "--arms", "2", "--json", "--progress", "off"], {
    AGENTPORT_FAKE_SCENARIO: JSON.stringify({ turns: [PRIME, arm, arm] }),
  });
  expect(ran.code).toBeLessThanOrEqual(1);
  const harvest = JSON.parse(ran.stdout);
  expect(problems("harvest", harvest)).toEqual([]);
  expect(problems("harvest", JSON.parse(readFileSync(join(harvest.run_dir, "harvest.json"), "utf8")))).toEqual([]);
});
