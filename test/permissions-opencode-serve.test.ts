// --permissions FILE answers opencode --serve's permission asks, through the
// compiled binary and the fake opencode server: the same rules as the ACP
// bridge (first match wins, no match rejected), the file written or not.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema } from "../src/core/verdict.ts";
import { agentport, fakeProject } from "./helpers.ts";
import { OPENCODE_POLICY_SCENARIO } from "./policy-scenario.ts";

describe("--permissions FILE with opencode --serve", () => {
  test("a rule that allows only edits under src/**: the bash ask and the edit outside are rejected, the edit inside is allowed and written", async () => {
    const p = fakeProject("agentport-policy-oc-", { AGENTPORT_FAKE_SCENARIO: JSON.stringify(OPENCODE_POLICY_SCENARIO) });
    mkdirSync(join(p.proj, "src"));
    const file = join(p.root, "policy.json");
    writeFileSync(file, JSON.stringify({ rules: [{ decision: "allow", kind: "edit", path: "src/**" }] }));
    const ran = await agentport(["run", "--agent", "opencode", "--serve", "--permissions", file, "--json", "--progress", "off", "go"], {
      cwd: p.proj,
      env: p.env,
    });
    expect(ran.stderr).not.toContain("usage");
    const verdict = VerdictSchema.parse(JSON.parse(ran.stdout));
    expect(ran.code).toBe(0);
    expect(verdict).toMatchObject({ status: "completed", ok: true, text: "Done." });
    expect(verdict.refused).toEqual([
      { kind: "permission", subject: "bash: touch made-by-shell.txt (rejected)" },
      { kind: "permission", subject: "edit: ../outside.txt (rejected)" },
    ]);
    expect(existsSync(join(p.root, "outside.txt"))).toBe(false);
    expect(existsSync(join(p.proj, "src", "inside.txt"))).toBe(true);
    expect(verdict.summary).toMatchObject({ permissions_asked: 3, permissions_allowed: 1 });
  }, 60_000);

  test("opencode without --serve still refuses it (exit 2), naming --serve", async () => {
    const p = fakeProject("agentport-policy-oc-");
    const file = join(p.root, "policy.json");
    writeFileSync(file, JSON.stringify({ rules: [{ decision: "allow" }] }));
    const ran = await agentport(["run", "--agent", "opencode", "--permissions", file, "--progress", "off", "go"], {
      cwd: p.proj,
      env: p.env,
    });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("--serve");
  }, 30_000);
});

describe("an opencode ask as the policy sees it (pure)", () => {
  test("its file from metadata.filepath (an edit's patterns are relative to opencode's worktree), bash by its command as the title", async () => {
    const { ServePermissions, policyRequest } = await import("../src/core/opencode/serve-permissions.ts");
    const asks = new ServePermissions();
    const cwd = "/tmp/x/project";
    // Lexical: these paths are not on the disk (the real resolution is tested through the binary in permissions-attack).
    const place = { cwd, physical: (path: string) => path };
    const edit = asks.asked({
      id: "per_1",
      permission: "edit",
      patterns: ["tmp/x/project/src/a.ts"],
      metadata: { filepath: `${cwd}/src/a.ts` },
    });
    expect(policyRequest(edit!, place)).toEqual({ kind: "edit", paths: ["src/a.ts"], title: "tmp/x/project/src/a.ts" });
    const bash = asks.asked({ id: "per_2", permission: "bash", patterns: ["npm test"], metadata: { command: "npm test" } });
    expect(policyRequest(bash!, place)).toEqual({ kind: "execute", paths: [], title: "npm test" });
    const outside = asks.asked({
      id: "per_3",
      permission: "external_directory",
      patterns: ["/tmp/x/*"],
      metadata: { filepath: "/tmp/x/o.txt" },
    });
    expect(policyRequest(outside!, place)).toEqual({ kind: "other", paths: [null], title: "/tmp/x/*" });
  });

  test("decidePermission: the file's first matching rule, none rejected; without a file, the mode", async () => {
    const { decidePermission, NO_DISK } = await import("../src/core/permissions.ts");
    const policy = { source: "p.json", rules: [{ decision: "allow" as const, kind: "edit" as const, path: "src/**" }] };
    const edit = { kind: "edit", paths: ["src/a.ts"], title: "" };
    expect(decidePermission({ policy, cwd: "/", physical: NO_DISK }, edit)).toEqual({
      decision: "allow",
      rule: 0,
      how: "rule 1 of p.json allows it",
    });
    expect(decidePermission({ policy, cwd: "/", physical: NO_DISK }, { ...edit, paths: [null] })).toMatchObject({
      decision: "reject",
      rule: null,
    });
    expect(decidePermission({ mode: "acceptEdits", cwd: "/", physical: NO_DISK }, edit).decision).toBe("allow");
    expect(decidePermission({ mode: "acceptEdits", cwd: "/", physical: NO_DISK }, { ...edit, kind: "execute" })).toEqual({
      decision: "reject",
      how: "allow it with --permission-mode bypassPermissions",
    });
  });
});
