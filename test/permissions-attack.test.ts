// Attacks on --permissions FILE through the compiled binary: the repository the
// agent works in is untrusted (planted symlinks, `..`, URIs, odd kinds), and so
// is what the agent asks; a path rule must never allow a write that lands
// outside the session's folder. Real processes: the fake ACP agent and the fake
// opencode server write where the OS resolves the path, as a real agent would.
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
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
  const env = { ...p.env, AGENTPORT_FAKE_SCENARIO: JSON.stringify({ steps: [...steps, { text: "Done." }] }) };
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

const edit = (path: string, extra: Record<string, unknown> = {}) => ({ permission: { kind: "edit", title: "Write", path, ...extra } });

describe("paths that leave the folder (ACP bridge)", () => {
  test("a planted symlink src/link -> outside, a rule allowing edits under src/**: rejected, nothing written outside", async () => {
    const { answers, verdict } = await acp(
      [edit("src/link/x.txt"), edit("src/ok.txt")],
      [{ decision: "allow", kind: "edit", path: "src/**" }],
    );
    expect(answers).toEqual(["reject", "allow"]);
    expect(existsSync(join(outside, "x.txt"))).toBe(false);
    expect(existsSync(join(p.proj, "src", "ok.txt"))).toBe(true);
    expect(verdict.refused).toHaveLength(1);
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
