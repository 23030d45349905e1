// Attacks on --permissions FILE through the compiled binary: the repository the
// agent works in is untrusted (planted symlinks, `..`, URIs, odd kinds), and so
// is what the agent asks; a path rule must never allow a write that lands
// outside the session's folder. Real processes: the fake ACP agent and the fake
// opencode server write where the OS resolves the path, as a real agent would.
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { VerdictSchema } from "../src/core/verdict.ts";
import { agentport, fakeProject, type FakeProject } from "./helpers.ts";

let p: FakeProject;
let outside: string;
beforeAll(() => {
  p = fakeProject("agentport-policy-attack-");
  outside = join(p.root, "outside");
  mkdirSync(outside);
  mkdirSync(join(p.proj, "src"));
  // Planted by the untrusted repository: a link out, and a dangling one whose target the agent could create later.
  symlinkSync(outside, join(p.proj, "src", "link"));
  symlinkSync(join(p.root, "later"), join(p.proj, "src", "dangling"));
  symlinkSync("../..", join(p.proj, "src", "up"));
});

function policy(name: string, body: unknown): string {
  const file = join(p.root, name);
  writeFileSync(file, typeof body === "string" ? body : JSON.stringify(body));
  return file;
}

/** One ACP run of these permission steps under this policy: the verdict and each recorded answer's decision. */
async function acp(steps: unknown[], rules: unknown) {
  const file = policy(`policy-${crypto.randomUUID()}.json`, { rules });
  const scenario = policy(`scenario-${crypto.randomUUID()}.json`, { steps: [...steps, { text: "Done." }] });
  const env = { ...p.env, AGENTPORT_FAKE_SCENARIO: scenario };
  const ran = await agentport(
    ["run", "--agent", "acp", "--acp-command", "fake-acp", "--permissions", file, "--json", "--progress", "off", "go"],
    {
      cwd: p.proj,
      env,
    },
  );
  const verdict = VerdictSchema.parse(JSON.parse(ran.stdout));
  const runs = join(p.env.AGENTPORT_HOME!, "runs");
  const folder = readdirSync(runs).find((n) => n.endsWith(verdict.session_id!.slice(0, 8)))!;
  const answers = readFileSync(join(runs, folder, "acp-answers.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line).decision as string);
  return { ran, verdict, answers };
}

/** A run refused for its policy file: exit 2, and its one line. */
async function refusedLine(file: string): Promise<string> {
  const ran = await agentport(["run", "--agent", "acp", "--acp-command", "fake-acp", "--permissions", file, "--progress", "off", "go"], {
    cwd: p.proj,
    env: p.env,
  });
  expect(ran.code).toBe(2);
  const lines = ran.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

const edit = (path: string, extra: Record<string, unknown> = {}) => ({ permission: { kind: "edit", title: "Write", path, ...extra } });

describe("paths that leave the folder (ACP bridge)", () => {
  test("a planted symlink src/link -> outside, a rule allowing edits under src/**: rejected, nothing written outside", async () => {
    const { answers, verdict } = await acp(
      [edit("src/link/x.txt"), edit("src/ok.txt"), edit("SRC/case.txt")],
      [{ decision: "allow", kind: "edit", path: "src/**" }],
    );
    // A case trick on a case-sensitive file system is another folder: no rule on src/** allows it.
    expect(answers).toEqual(["reject", "allow", "reject"]);
    expect(existsSync(join(outside, "x.txt"))).toBe(false);
    expect(existsSync(join(p.proj, "src", "ok.txt"))).toBe(true);
    expect(verdict.refused).toHaveLength(2);
  }, 30_000);

  test("a dangling link, `..` after a link, a link to `../..`, `//`, a trailing `/.`: all outside are rejected under `**`", async () => {
    const cases: [string, string][] = [
      ["src/dangling/x.txt", "reject"],
      ["src/link/../escaped.txt", "reject"],
      ["src/up/escaped2.txt", "reject"],
      ["src/link/.", "reject"],
      ["src//link/y.txt", "reject"],
      ["src//./double.txt", "allow"],
    ];
    const { answers } = await acp(
      cases.map(([path]) => edit(path)),
      [{ decision: "allow", kind: "edit", path: "**" }],
    );
    expect(answers).toEqual(cases.map(([, decision]) => decision));
    expect(readdirSync(outside)).toEqual([]);
    expect(existsSync(join(p.root, "escaped.txt"))).toBe(false);
    expect(existsSync(join(p.root, "escaped2.txt"))).toBe(false);
    expect(existsSync(join(p.proj, "src", "double.txt"))).toBe(true);
  }, 30_000);

  test("a file:// URI, a NUL, a relative `..`, no locations at all: no path rule allows them", async () => {
    const { answers } = await acp(
      [
        edit(`file://${outside}/uri.txt`),
        edit(`file://${p.proj}/src/uri-inside.txt`),
        edit("src/nul.txt", { locations: [`${p.proj}/src/a\u0000b`] }),
        edit("src/none.txt", { locations: [] }),
        edit("src/rel.txt", { locations: ["src/../../outside/rel.txt"] }),
        edit("src/%2e%2e/pct.txt"),
      ],
      [{ decision: "allow", kind: "edit", path: "**" }],
    );
    // The percent-encoded segment is a literal folder name inside (the write fails: it does not exist); it is not decoded.
    expect(answers).toEqual(["reject", "reject", "reject", "reject", "reject", "allow"]);
    expect(readdirSync(outside)).toEqual([]);
  }, 30_000);
});

describe("kinds (ACP bridge)", () => {
  test("an unknown kind, a missing one, an edit disguised in a title: no rule on `edit` allows them", async () => {
    const { answers } = await acp(
      [
        edit("src/k1.txt", { kind: "format_disk" }),
        edit("src/k2.txt", { kind: "", title: "edit src/k2.txt" }),
        edit("src/k3.txt", { kind: "other", title: "edit" }),
        edit("src/k4.txt", { kind: "EDIT" }),
      ],
      [{ decision: "allow", kind: "edit", path: "src/**" }],
    );
    expect(answers).toEqual(["reject", "reject", "reject", "reject"]);
  }, 30_000);
});

describe("opencode --serve", () => {
  test("an ask with no metadata.filepath: an edit's patterns out of the folder are outside, an external_directory's name no path", async () => {
    const { ServePermissions, policyRequest } = await import("../src/core/opencode/serve-permissions.ts");
    const { decidePermission } = await import("../src/core/permissions.ts");
    const { physicalPath } = await import("../src/io/physical-path.ts");
    const place = { cwd: p.proj, physical: physicalPath };
    const asks = new ServePermissions();
    const rules = { ...place, policy: { source: "p.json", rules: [{ decision: "allow" as const, path: "**" }] } };
    const edit = asks.asked({ id: "per_1", permission: "edit", patterns: ["../outside/x.txt", "src/link/y.txt"] });
    expect(policyRequest(edit!, place).paths).toEqual([null, null]);
    expect(decidePermission(rules, policyRequest(edit!, place)).decision).toBe("reject");
    const external = asks.asked({ id: "per_2", permission: "external_directory", patterns: [`${outside}/*`] });
    expect(policyRequest(external!, place)).toMatchObject({ kind: "other", paths: [] });
    expect(decidePermission(rules, policyRequest(external!, place)).decision).toBe("reject");
  });

  test("an edit through a planted symlink under src/**: rejected, nothing written outside", async () => {
    const scenario = { steps: [{ write: "src/link/oc.txt" }, { write: "src/oc-inside.txt" }, { text: "Done." }, { done: true }] };
    const file = policy("oc.json", { rules: [{ decision: "allow", kind: "edit", path: "src/**" }] });
    const ran = await agentport(["run", "--agent", "opencode", "--serve", "--permissions", file, "--json", "--progress", "off", "go"], {
      cwd: p.proj,
      env: { ...p.env, AGENTPORT_FAKE_SCENARIO: JSON.stringify(scenario) },
    });
    const verdict = VerdictSchema.parse(JSON.parse(ran.stdout));
    expect(verdict.refused.map((r) => r.subject)).toEqual(["edit: src/link/oc.txt (rejected)"]);
    expect(existsSync(join(outside, "oc.txt"))).toBe(false);
    expect(existsSync(join(p.proj, "src", "oc-inside.txt"))).toBe(true);
  }, 60_000);
});

describe("the policy file's globs", () => {
  test("a rule path that is absolute or climbs out with `..`: one line naming it, exit 2, nothing started", async () => {
    for (const path of ["/etc/**", "../**", "src/../../x", ["src/**", ".."]]) {
      const file = policy("escape.json", { rules: [{ decision: "allow", kind: "edit", path }] });
      const line = await refusedLine(file);
      expect(line).toContain("rules[0].path");
      expect(line).toContain("relative to the session's folder");
    }
  }, 30_000);

  test("regex metacharacters in a glob are literal", async () => {
    const { answers } = await acp(
      [edit("src/a+b(1).txt"), edit("src/aab1.txt")],
      [{ decision: "allow", kind: "edit", path: "src/a+b(1).txt" }],
    );
    expect(answers).toEqual(["allow", "reject"]);
  }, 30_000);

  test("star-heavy globs against a long title and 64 long paths, under 200 rules: answered in bounded time", async () => {
    // Within the file's 1 MiB: 199 rules of 64 globs of 25 stars each.
    const stars = `${"*a".repeat(25)}b`;
    const long = "a".repeat(3000);
    // Long paths of names as long as a file system allows (255): not there, so placed as written.
    const name = "a".repeat(250);
    const paths = Array.from({ length: 64 }, (_, i) => `${p.proj}/src/d${i}/${`${name}/`.repeat(10)}${name}`);
    const rules = [
      ...Array.from({ length: 199 }, () => ({ decision: "allow", kind: "edit", path: Array.from({ length: 64 }, () => `**/${stars}`) })),
      { decision: "reject", title: `${"*a".repeat(400)}b` },
    ];
    const started = performance.now();
    const { answers } = await acp([{ permission: { kind: "edit", title: long, path: "src/slow.txt", locations: paths } }], rules);
    expect(answers).toEqual(["reject"]);
    expect(performance.now() - started).toBeLessThan(10_000);
  }, 60_000);
});

describe("matching's bounds (pure)", () => {
  test("a glob is matched without backtracking: 400 stars against 4096 characters, and `**/` chains", async () => {
    const { globPattern } = await import("../src/core/glob.ts");
    const started = performance.now();
    expect(globPattern(`${"*a".repeat(400)}b`, false).test("a".repeat(4096))).toBe(false);
    expect(globPattern(`${"**/".repeat(20)}x`).test(`${"a/".repeat(500)}y`)).toBe(false);
    expect(globPattern(`${"**/".repeat(20)}x`).test(`${"a/".repeat(500)}x`)).toBe(true);
    expect(globPattern("src/**/*.ts").test("src/a/b/c.ts")).toBe(true);
    expect(globPattern("src/**/*.ts").test("src/c.ts")).toBe(true);
    expect(globPattern("a*b", false).test("a/x/b")).toBe(true);
    expect(globPattern("a*b").test("a/x/b")).toBe(false);
    // Seconds only because the test machine is shared; unbounded (hours) before.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  test("a title longer than 4096: a title rule reached rejects it (no later rule allows), a rule without one still decides", async () => {
    const { decideByPolicy } = await import("../src/core/permissions.ts");
    const request = { kind: "execute", paths: [], title: `${"x".repeat(5000)} rm -rf /` };
    const guarded = { source: "p.json", rules: [{ decision: "reject" as const, title: "*rm -rf*" }, { decision: "allow" as const }] };
    expect(decideByPolicy(guarded, request)).toEqual({ decision: "reject", rule: null });
    expect(decideByPolicy({ source: "p.json", rules: [{ decision: "allow" }] }, request)).toEqual({ decision: "allow", rule: 0 });
  });
});

describe("the policy file itself", () => {
  test("a link to /dev/zero, a FIFO, 2 MB, invalid UTF-8, a repeated key, __proto__: one line naming it, exit 2, nothing started", async () => {
    const zero = join(p.root, "zero.json");
    symlinkSync("/dev/zero", zero);
    const fifo = join(p.root, "fifo.json");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const utf8 = join(p.root, "utf8.json");
    writeFileSync(
      utf8,
      Buffer.concat([Buffer.from('{"rules": [{"decision": "allow", "title": "'), Buffer.from([0xff, 0xfe]), Buffer.from('"}]}')]),
    );
    const cases: [string, string][] = [
      [zero, "a character device, not a file"],
      [fifo, "a FIFO (named pipe), not a file"],
      [policy("huge.json", " ".repeat(2_000_000)), "at most 1048576"],
      [utf8, "not UTF-8"],
      [policy("dup.json", '{"rules": [{"decision": "reject", "kind": "edit", "decision": "allow"}]}'), '"decision" twice'],
      [policy("proto.json", '{"rules": [{"decision": "reject", "__proto__": {"decision": "allow"}}]}'), "rules[0].__proto__: unknown key"],
      [policy("proto2.json", '{"__proto__": {"rules": []}, "rules": []}'), "__proto__: unknown key"],
    ];
    for (const [file, words] of cases) {
      expect(await refusedLine(file)).toContain(words);
    }
  }, 60_000);
});
