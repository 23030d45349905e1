// `agentport resume ID --interactive` under a pseudo-terminal (`script` from
// util-linux): the birth-folder guard first, then the fake agent on the
// terminal, in the birth folder, on that session, with the session's
// environment profile; the hand-over is a phase of kind "interactive".
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema } from "../src/core/verdict.ts";
import { agentport, BIN, fakeProject, type FakeProject } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const SCRIPT = Bun.which("script");

type World = FakeProject;

function world(dialect: "0.73.1" | "0.85"): World {
  const w = fakeProject("agentport-interactive-", {
    AGENTPORT_FAKE_LOG_ENV: "VAULT_A_TOKEN,VAULT_B_TOKEN",
    AGENTPORT_FAKE_PI_DIALECT: dialect,
    AGENTPORT_FAKE_SCENARIO: "text",
    AGENTPORT_GATEWAY: "",
    // The fake gemini, like the real one, refuses a folder it does not trust.
    GEMINI_CLI_TRUST_WORKSPACE: "true",
  });
  made.push(w.root);
  mkdirSync(join(w.root, "elsewhere"));
  // An env file (--env-file .env): with a profile it is a vault, and the agent gets only the keys named.
  writeFileSync(join(w.proj, ".env"), "VAULT_A_TOKEN=from-dotenv-a\nVAULT_B_TOKEN=from-dotenv-b\n");
  return w;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** agentport on a pseudo-terminal: `script -qec CMD /dev/null`; the output as one string. */
async function onTerminal(w: World, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  const proc = Bun.spawn([SCRIPT ?? "script", "-qec", [BIN, ...args].map(quote).join(" "), "/dev/null"], {
    cwd,
    env: { ...process.env, NO_COLOR: "1", TERM: "dumb", ...w.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, output: (out + err).replace(/\r/g, "") };
}

type Invocation = { fake: string; argv: string[]; cwd: string; tty: boolean; interactive?: boolean; env: Record<string, string | null> };
const invocations = (w: World): Invocation[] =>
  existsSync(w.log)
    ? readFileSync(w.log, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Invocation)
        .filter((r) => !r.argv.includes("--version") && !r.argv.includes("--help"))
    : [];

async function phases(w: World, id: string): Promise<{ kind: string; status: string; details: Record<string, unknown> | null }[]> {
  const show = await agentport(["show", "--json", id], { cwd: w.proj, env: w.env });
  return JSON.parse(show.stdout).phases;
}

const CASES = [
  ["claude", "0.73.1"],
  ["pi", "0.73.1"],
  ["pi", "0.85"],
  ["codex", "0.73.1"],
  ["gemini", "0.73.1"],
  ["opencode", "0.73.1"],
] as const;

describe.skipIf(SCRIPT === null).each(CASES)("%s (fake pi dialect %s)", (agent, dialect) => {
  test("the terminal goes to the agent on that session, in its birth folder, with its profile; the ledger records it", async () => {
    const w = world(dialect);
    const first = await agentport(
      [
        "run",
        "--agent",
        agent,
        "--model",
        "standin/model-1",
        "--env-file",
        ".env",
        "--profile",
        "VAULT_A_TOKEN",
        "--json",
        "--progress",
        "off",
        "hi",
      ],
      { cwd: w.proj, env: w.env },
    );
    expect(first.code).toBe(0);
    const id = VerdictSchema.parse(JSON.parse(first.stdout)).session_id ?? "?";
    const session = JSON.parse((await agentport(["show", "--json", id], { cwd: w.proj, env: w.env })).stdout);

    // From another folder: refused before any process starts.
    const refused = await onTerminal(w, ["resume", id.slice(0, 8), "--interactive"], join(w.root, "elsewhere"));
    expect(refused.code).toBe(3);
    expect(refused.output).toContain(`was born in ${w.proj}`);
    expect(invocations(w)).toHaveLength(1);

    // From the birth folder: the agent gets the terminal.
    const ran = await onTerminal(w, ["resume", id.slice(0, 8), "--interactive", "--env-file", ".env"], w.proj);
    expect(ran.code).toBe(0);
    expect(ran.output).toContain(`fake-${agent} interactive: cwd=${w.proj}`);
    const calls = invocations(w);
    expect(calls).toHaveLength(2);
    const call = calls[1];
    expect(call?.cwd).toBe(w.proj);
    expect(call?.tty).toBe(true);
    // The session's environment profile: VAULT_A_TOKEN named, VAULT_B_TOKEN kept in the vault.
    expect(call?.env).toEqual({ VAULT_A_TOKEN: "from-dotenv-a", VAULT_B_TOKEN: null });
    if (agent === "claude") {
      expect(call?.argv).toEqual(["--resume", id, "--model", "model-1"]);
      expect(call?.interactive).toBe(true);
    } else if (agent === "codex") {
      // codex's own thread id, as thread.started named it and the ledger bound it.
      expect(call?.argv).toEqual(["resume", session.agent_session_id]);
      expect(session.agent_session_id).not.toBe(id);
    } else if (agent === "opencode") {
      // opencode's own ses_ id, as its first record named it and the ledger bound it.
      expect(call?.argv).toEqual(["-s", session.agent_session_id]);
      expect(session.agent_session_id).toStartWith("ses_");
    } else if (agent === "gemini") {
      expect(call?.argv).toEqual(["--resume", id, "-m", "model-1"]);
      expect(call?.interactive).toBe(true);
    } else if (dialect === "0.73.1") {
      expect(call?.argv).toEqual(["--session", session.session_file]);
    } else {
      expect(call?.argv).toEqual(["--session-id", id, "--session-dir", session.session_dir]);
    }
    const recorded = await phases(w, id);
    expect(recorded.map((p) => [p.kind, p.status])).toEqual([
      ["run", "completed"],
      ["interactive", "completed"],
    ]);
    expect(recorded[1]?.details).toEqual({ interactive: true, exit_code: 0 });
  });
});

test.skipIf(SCRIPT === null)("without a terminal, or with a prompt, --interactive is a usage error and nothing starts", async () => {
  const w = world("0.73.1");
  const first = await agentport(["run", "--agent", "claude", "--json", "--progress", "off", "hi"], { cwd: w.proj, env: w.env });
  const id = VerdictSchema.parse(JSON.parse(first.stdout)).session_id ?? "?";
  const piped = await agentport(["resume", id, "--interactive"], { cwd: w.proj, env: w.env });
  expect(piped.code).toBe(2);
  expect(piped.stderr).toContain("--interactive needs a terminal");
  const prompted = await onTerminal(w, ["resume", id, "--interactive", "go on"], w.proj);
  expect(prompted.code).toBe(2);
  expect(prompted.output).toContain("--interactive takes no prompt");
  expect(invocations(w)).toHaveLength(1);
  expect((await phases(w, id)).map((p) => p.kind)).toEqual(["run"]);
});
