// --permissions FILE through the compiled binary: one policy file (rules on the
// tool kind, paths and title; first match wins; no match rejected) answers the
// ACP bridge's permission requests; an agent that cannot apply it refuses it
// before anything starts, and a bad file is one line, exit 2.
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema } from "../src/core/verdict.ts";
import { agentport, fakeProject, type FakeProject } from "./helpers.ts";

let p: FakeProject;
beforeAll(() => {
  p = fakeProject("agentport-policy-", { AGENTPORT_FAKE_SCENARIO: "permission" });
});

function policy(name: string, body: unknown): string {
  const file = join(p.root, name);
  writeFileSync(file, typeof body === "string" ? body : JSON.stringify(body));
  return file;
}

async function run(args: string[]) {
  const ran = await agentport(["run", "--agent", "acp", "--acp-command", "fake-acp", "--json", "--progress", "off", ...args, "go"], {
    cwd: p.proj,
    env: p.env,
  });
  return { ...ran, verdict: ran.stdout ? VerdictSchema.parse(JSON.parse(ran.stdout)) : null };
}

describe("--permissions FILE", () => {
  test("a rule that allows edits under the folder: the fake ACP agent's write is allowed, the rule recorded", async () => {
    const file = policy("allow-edits.json", {
      rules: [
        { decision: "reject", kind: "edit", path: "secrets/**" },
        { decision: "allow", kind: ["edit", "delete"], path: "**" },
      ],
    });
    const { code, verdict } = await run(["--permissions", file]);
    expect(code).toBe(0);
    expect(verdict?.refused).toEqual([]);
    expect(existsSync(join(p.proj, "made-by-fake.txt"))).toBe(true);
    const runs = join(p.env.AGENTPORT_HOME!, "runs");
    const folder = readdirSync(runs).find((n) => n.endsWith(verdict!.session_id!.slice(0, 8)))!;
    expect(JSON.parse(readFileSync(join(runs, folder, "acp-answers.jsonl"), "utf8").trim())).toMatchObject({
      kind: "edit",
      decision: "allow",
      rule: 1,
    });
  }, 30_000);

  test("no rule matches (reads only): rejected, in refused with the file named", async () => {
    const file = policy("reads.json", { rules: [{ decision: "allow", kind: ["read", "search"] }] });
    const { code, verdict } = await run(["--permissions", file]);
    expect(code).toBe(0);
    expect(verdict?.refused).toEqual([
      { kind: "permission", subject: `edit made-by-fake.txt: rejected; no rule of ${file} allows it; add one` },
    ]);
    // stderr says the same, and no flag acp would refuse (--tools).
    const { stderr } = await agentport(["run", "--agent", "acp", "--acp-command", "fake-acp", "--permissions", file, "go"], {
      cwd: p.proj,
      env: p.env,
    });
    expect(stderr).toContain(`[warn] refused permission: edit made-by-fake.txt: rejected; no rule of ${file} allows it; add one\n`);
  }, 30_000);

  test("a title rule: first match wins", async () => {
    const file = policy("title.json", { rules: [{ decision: "reject", title: "Writing to *" }, { decision: "allow" }] });
    const { verdict } = await run(["--permissions", file]);
    expect(verdict?.refused[0]?.subject).toBe(`edit made-by-fake.txt: rejected; rule 1 of ${file} rejects it`);
  }, 30_000);

  test("a bad file is one line, exit 2, nothing started", async () => {
    const cases: [string, string][] = [
      [policy("notjson.json", "{rules"), "not JSON"],
      [policy("unknown-kind.json", { rules: [{ decision: "allow", kind: "format_disk" }] }), "rules[0].kind"],
      [policy("extra.json", { rules: [], allow_all: true }), "allow_all: unknown key"],
      [policy("decision.json", { rules: [{ kind: "edit" }] }), "rules[0].decision: missing"],
      [join(p.root, "missing.json"), "no such file"],
      [p.root, "a folder"],
    ];
    for (const [file, words] of cases) {
      const { code, stderr, verdict } = await run(["--permissions", file]);
      expect(code).toBe(2);
      // --json's pre-flight verdict: nothing ran.
      expect(verdict).toMatchObject({ session_id: null, failure: { kind: "usage" }, summary: { preflight: true } });
      const lines = stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(words);
    }
  }, 60_000);

  test("an agent that cannot apply it refuses it (exit 2), and so does --permission-mode beside it", async () => {
    const file = policy("any.json", { rules: [{ decision: "allow" }] });
    for (const agent of ["claude", "pi", "codex", "gemini", "opencode"]) {
      const ran = await agentport(["run", "--agent", agent, "--permissions", file, "--progress", "off", "go"], { cwd: p.proj, env: p.env });
      expect(ran.code).toBe(2);
      expect(ran.stderr).toContain("--permissions");
    }
    const both = await run(["--permissions", file, "--permission-mode", "acceptEdits"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("choose one");
  }, 60_000);
});

describe("the policy's matching (pure)", () => {
  test("globs: ** crosses folders, * and ? do not; paths outside the folder match no path rule", async () => {
    const { decideByPolicy, policyPath } = await import("../src/core/permissions.ts");
    const { globPattern } = await import("../src/core/glob.ts");
    const at = (cwd: string) => ({ cwd, physical: (path: string) => path });
    expect(globPattern("src/**").test("src/a/b.ts")).toBe(true);
    expect(globPattern("src/*.ts").test("src/a/b.ts")).toBe(false);
    expect(globPattern("**/*.md").test("README.md")).toBe(true);
    expect(globPattern("a?c").test("a/c")).toBe(false);
    expect(globPattern("a.b").test("axb")).toBe(false);
    expect(policyPath("/w/p/src/x.ts", at("/w/p"))).toBe("src/x.ts");
    expect(policyPath("/w/other/x.ts", at("/w/p"))).toBeNull();
    expect(policyPath("src/../../x", at("/w/p"))).toBeNull();
    expect(policyPath("./src//a/../b", at("/w/p"))).toBe("src/b");
    const policy = { source: "p.json", rules: [{ decision: "allow" as const, kind: "edit" as const, path: "**" }] };
    expect(decideByPolicy(policy, { kind: "edit", paths: ["a.txt"], title: "" })).toEqual({ decision: "allow", rule: 0 });
    expect(decideByPolicy(policy, { kind: "edit", paths: ["a.txt", null], title: "" })).toEqual({ decision: "reject", rule: null });
    expect(decideByPolicy(policy, { kind: "edit", paths: [], title: "" })).toEqual({ decision: "reject", rule: null });
    expect(decideByPolicy(policy, { kind: "execute", paths: ["a.txt"], title: "" })).toEqual({ decision: "reject", rule: null });
  });
});
