// `agentport doctor` against the real pi and claude devDependencies: zero tokens.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { agentport, ROOT, tempDir } from "./helpers.ts";
import { peerOrSkip } from "./peers/peers.ts";

const bin = (name: string) => join(ROOT, "node_modules", ".bin", name);

describe("agentport doctor", () => {
  test("reports the real pi 0.73.1 (dialect, flags, rpc) and claude", async () => {
    const home = tempDir();
    const ran = await agentport(["doctor", "--json", "--home", join(home, "state"), "--pi-bin", bin("pi"), "--claude-bin", bin("claude")], {
      env: { HOME: home, ANTHROPIC_API_KEY: "sk-ant-doctor-test", OPENROUTER_API_KEY: "sk-or-doctor-test" },
    });
    // One object: {ok, checks: [{name, ok, ms, error}], ms}.
    const report = JSON.parse(ran.stdout) as {
      ok: boolean;
      ms: number;
      checks: { name: string; ok: boolean; ms: number; error: string | null; detail: string }[];
    };
    expect(ran.code).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.ms).toBeGreaterThanOrEqual(0);
    for (const c of report.checks) expect(c).toMatchObject({ ok: true, error: null, ms: expect.any(Number) });
    const pi = report.checks.find((f) => f.name === "pi");
    expect(pi?.detail).toContain("pi 0.73.1, sessions named by session-file");
    expect(pi?.detail).not.toContain("--session-id");
    expect(report.checks.find((f) => f.name === "pi rpc")?.detail).toContain("get_state answered");
    expect(report.checks.find((f) => f.name === "claude")?.detail).toContain("2.1.197");
  });

  test("--json with a missing agent: still one object, the failed check with its error", async () => {
    const home = tempDir();
    const ran = await agentport(["doctor", "--json", "--home", join(home, "state"), "--pi-bin", join(home, "no-pi")], {
      env: { HOME: home },
    });
    expect(ran.code).toBe(5);
    const report = JSON.parse(ran.stdout);
    expect(report.ok).toBe(false);
    expect(report.checks.find((c: { name: string }) => c.name === "pi")).toMatchObject({
      ok: false,
      error: expect.stringContaining("no-pi"),
    });
  });

  const codex = peerOrSkip("codex");
  const gemini = peerOrSkip("gemini");
  test.skipIf(codex === null || gemini === null)("probes the real codex 0.169.0 and gemini 0.61.0 at zero tokens", async () => {
    const home = tempDir();
    const ran = await agentport(
      ["doctor", "--json", "--home", join(home, "state"), "--codex-bin", codex ?? "", "--gemini-bin", gemini ?? ""],
      { env: { HOME: home } },
    );
    const report = JSON.parse(ran.stdout) as { checks: { name: string; ok: boolean; detail: string }[] };
    expect(report.checks.find((f) => f.name === "codex")).toMatchObject({ ok: true });
    expect(report.checks.find((f) => f.name === "codex")?.detail).toContain(
      "codex-cli 0.169.0; flags: --json --skip-git-repo-check --sandbox --output-schema --model",
    );
    expect(report.checks.find((f) => f.name === "gemini")).toMatchObject({ ok: true });
    expect(report.checks.find((f) => f.name === "gemini")?.detail).toContain(
      "gemini 0.61.0; flags: --output-format --session-id --resume --skip-trust --approval-mode --model",
    );
  });

  const opencode = peerOrSkip("opencode");
  test.skipIf(opencode === null)(
    "probes the real opencode 1.18.33 at zero tokens",
    async () => {
      const home = tempDir();
      const ran = await agentport(["doctor", "--json", "--home", join(home, "state"), "--opencode-bin", opencode ?? ""], {
        env: {
          HOME: home,
          XDG_DATA_HOME: join(home, "data"),
          XDG_CONFIG_HOME: join(home, "config"),
          XDG_STATE_HOME: join(home, "state-oc"),
          XDG_CACHE_HOME: join(home, "cache"),
        },
      });
      const report = JSON.parse(ran.stdout) as { checks: { name: string; ok: boolean; detail: string }[] };
      expect(report.checks.find((f) => f.name === "opencode")).toMatchObject({ ok: true });
      expect(report.checks.find((f) => f.name === "opencode")?.detail).toContain(
        "opencode 1.18.33; flags: --format --session --fork --model --auto",
      );
      expect(report.checks.find((f) => f.name === "opencode serve")).toMatchObject({ ok: true });
      // Two probes of a Bun binary of 150 MB (run --help, serve --help), each with its --version: slow on a loaded box.
    },
    60_000,
  );

  test("an agent nobody asked for and nobody installed is said, not failed", async () => {
    const home = tempDir();
    const ran = await agentport(["doctor", "--json", "--home", join(home, "state")], {
      env: { HOME: home, PATH: "/usr/bin:/bin", AGENTPORT_CODEX_BIN: "", AGENTPORT_GEMINI_BIN: "", AGENTPORT_OPENCODE_BIN: "" },
    });
    const report = JSON.parse(ran.stdout) as { checks: { name: string; ok: boolean; detail: string }[] };
    expect(report.checks.find((f) => f.name === "codex")).toMatchObject({
      name: "codex",
      ok: true,
      error: null,
      detail: "not installed (npm install -g @openai/codex to use it)",
    });
  });

  test("a missing agent is a finding with what to do, exit 5", async () => {
    const home = tempDir();
    const ran = await agentport(["doctor", "--home", join(home, "state"), "--pi-bin", join(home, "no-pi")], { env: { HOME: home } });
    expect(ran.code).toBe(5);
    expect(ran.stdout).toContain("FAIL pi");
    expect(ran.stdout).toContain("→ npm install -g @mariozechner/pi-coding-agent");
  });
});
