// The birth-folder rule against a tampered session file (issue 12, item 3) and
// the small refusals of item 11, through the compiled binary and its fake agents:
// each is one line, a documented exit code, no agent started and nothing written.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentport, fakeProject, type FakeProject } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function world(): FakeProject & { other: string } {
  const w = fakeProject("agentport-trust-resume-", {
    AGENTPORT_FAKE_PI_DIALECT: "0.73.1",
    AGENTPORT_FAKE_SCENARIO: "text",
    AGENTPORT_GATEWAY: "",
  });
  made.push(w.root);
  const other = join(w.root, "other");
  mkdirSync(other);
  return { ...w, other };
}

const calls = (w: FakeProject): number =>
  existsSync(w.log)
    ? readFileSync(w.log, "utf8")
        .trim()
        .split("\n")
        .filter((l) => !l.includes('"--version"') && !l.includes('"--help"')).length
    : 0;

/** Every row of the ledger, as `sessions --json` exports it: "nothing written" means this did not change. */
async function ledgerRows(w: FakeProject): Promise<string> {
  const ran = await agentport(["sessions", "--json"], { cwd: w.proj, env: w.env });
  expect(ran.code).toBe(0);
  return ran.stdout;
}

function oneLine(stderr: string): string {
  const lines = stderr.split("\n").filter((l) => l.trim() !== "");
  expect(lines).toHaveLength(1);
  return lines[0] ?? "";
}

async function firstPiSession(w: FakeProject): Promise<{ id: string; file: string }> {
  const ran = await agentport(["run", "--agent", "pi", "--model", "standin/m", "--json", "--progress", "off", "hi"], {
    cwd: w.proj,
    env: w.env,
  });
  expect(ran.code).toBe(0);
  const id = JSON.parse(ran.stdout).session_id as string;
  const show = JSON.parse((await agentport(["show", "--json", id], { cwd: w.proj, env: w.env })).stdout);
  return { id, file: show.session_file };
}

function rewriteHeader(file: string, change: (header: Record<string, unknown>) => void): void {
  const [first, ...rest] = readFileSync(file, "utf8").split("\n");
  const header = JSON.parse(first ?? "{}");
  change(header);
  writeFileSync(file, [JSON.stringify(header), ...rest].join("\n"));
}

describe("a tampered pi session file", () => {
  test("a header whose cwd names another folder than the ledger's birth folder: refused, exit 3, both folders named, no agent started", async () => {
    const w = world();
    const { id, file } = await firstPiSession(w);
    rewriteHeader(file, (h) => {
      h.cwd = w.other;
    });
    const before = calls(w);
    const ledger = await ledgerRows(w);
    const ran = await agentport(["resume", id, "--json", "go on"], { cwd: w.proj, env: w.env });
    expect(ran.code).toBe(3);
    const line = oneLine(ran.stderr);
    expect(line).toContain(`its pi session file ${file} says it was born in ${w.other}, but the ledger says ${w.proj}`);
    expect(JSON.parse(ran.stdout)).toMatchObject({ status: "refused", ok: false, cost_micro_usd: 0 });
    expect(calls(w)).toBe(before);
    expect(await ledgerRows(w)).toBe(ledger);
  });

  test("the same from the tampered folder: still refused (the ledger's birth folder rules)", async () => {
    const w = world();
    const { id, file } = await firstPiSession(w);
    rewriteHeader(file, (h) => {
      h.cwd = w.other;
    });
    const before = calls(w);
    const ran = await agentport(["resume", id, "go on"], { cwd: w.other, env: w.env });
    expect(ran.code).toBe(3);
    expect(oneLine(ran.stderr)).toContain(`was born in ${w.proj}, not in ${w.other}`);
    expect(calls(w)).toBe(before);
  });

  test("an untouched header resumes as before", async () => {
    const w = world();
    const { id } = await firstPiSession(w);
    const ran = await agentport(["resume", id, "--json", "go on"], { cwd: w.proj, env: w.env });
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout).session_id).toBe(id);
  });

  test("a relative cwd in a session header (found on disk): one line, exit 2, nothing declared", async () => {
    const w = world();
    const { file } = await firstPiSession(w);
    rewriteHeader(file, (h) => {
      h.cwd = "../elsewhere";
    });
    // A fresh ledger: the session is only known from its file.
    const env = { ...w.env, AGENTPORT_HOME: join(w.root, "state2") };
    const id = JSON.parse(readFileSync(file, "utf8").split("\n")[0] ?? "{}").id as string;
    const ran = await agentport(["resume", id, "--session-dir", join(w.root, "state", "pi-sessions"), "go on"], { cwd: w.proj, env });
    expect(ran.code).toBe(2);
    expect(oneLine(ran.stderr)).toContain(`the session header's cwd "../elsewhere" is not an absolute folder`);
    expect(existsSync(join(w.root, "state2"))).toBe(false);
  });
});

describe("small refusals: one line, the exit code, nothing written", () => {
  test('resume "" is refused (it would match every session file)', async () => {
    const w = world();
    await firstPiSession(w);
    const before = calls(w);
    const ledger = await ledgerRows(w);
    const ran = await agentport(["resume", "", "go on"], { cwd: w.proj, env: w.env });
    expect(ran.code).toBe(2);
    expect(oneLine(ran.stderr)).toContain("resume needs a session id");
    expect(calls(w)).toBe(before);
    expect(await ledgerRows(w)).toBe(ledger);
  });

  test("a bad flag on resume of a session found on disk writes nothing (no declaration, no ledger)", async () => {
    const w = world();
    const { file } = await firstPiSession(w);
    const id = JSON.parse(readFileSync(file, "utf8").split("\n")[0] ?? "{}").id as string;
    const env = { ...w.env, AGENTPORT_HOME: join(w.root, "state2") };
    const sessionDir = join(w.root, "state", "pi-sessions");
    for (const bad of [
      ["--timeout", "soon"],
      ["--thinking", "hard"],
      ["--max-line-bytes", "0"],
      ["--env-file", "missing.env"],
      ["--loop", "maybe"],
    ]) {
      const ran = await agentport(["resume", id, "--session-dir", sessionDir, ...bad, "go on"], { cwd: w.proj, env });
      expect(ran.code).toBe(2);
      oneLine(ran.stderr);
      expect(existsSync(join(w.root, "state2"))).toBe(false);
    }
  });

  test("--max-line-bytes above 256 MiB is refused before anything starts", async () => {
    const w = world();
    const ran = await agentport(["run", "--max-line-bytes", String(257 * 1024 * 1024), "hi"], { cwd: w.proj, env: w.env });
    expect(ran.code).toBe(2);
    expect(oneLine(ran.stderr)).toContain("--max-line-bytes must be at most 268435456 (256 MiB)");
    expect(existsSync(w.log)).toBe(false);
    const ok = await agentport(["run", "--max-line-bytes", String(256 * 1024 * 1024), "--json", "hi"], { cwd: w.proj, env: w.env });
    expect(ok.code).toBe(0);
  });

  test.each([
    ["the root refers to itself", { $ref: "#" }],
    ["a property refers to the root", { type: "object", properties: { next: { $ref: "#" } } }],
    ["two definitions refer to each other", { $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" }],
  ])("a recursive $ref in --schema (%s) is refused before any agent starts", async (_name, schema) => {
    const w = world();
    const file = join(w.root, "schema.json");
    writeFileSync(file, JSON.stringify(schema));
    for (const agent of ["claude", "pi"]) {
      const ran = await agentport(["run", "--agent", agent, "--model", "standin/m", "--schema", file, "hi"], { cwd: w.proj, env: w.env });
      expect(ran.code).toBe(2);
      expect(oneLine(ran.stderr)).toContain(`--schema ${file}: recursive $ref`);
    }
    expect(existsSync(w.log)).toBe(false);
    expect(existsSync(join(w.root, "state"))).toBe(false);
  });
});
