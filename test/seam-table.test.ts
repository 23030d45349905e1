// The adapter table's rows are read, not declared: the seed's axes (how the
// prompt gets in, how the end of a turn is seen, where the session lives, who
// names it) decide which driver a run takes, what `config` and `--verbose`
// say, what --isolate keeps writable and what resume refuses before anything
// starts. A changed field changes the behaviour.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Axes } from "../src/agents/adapter.ts";
import { axesOf, resumeRefusal, stateFolders } from "../src/agents/axes.ts";
import { AGENTS, BIN_ARGS } from "../src/agents/table.ts";
import { AGENT_NAMES, AGENT_TRAITS, type AgentName } from "../src/core/agents.ts";
import { agentport, fakeProject, fakeRuns, ROOT, type FakeProject } from "./helpers.ts";

const projects: FakeProject[] = [];
afterAll(() => {
  for (const p of projects) rmSync(p.root, { recursive: true, force: true });
});

type Shown = { injection: string; observation: string; state: string; session_id: string };

/** What each agent is, by the seed's axes; opencode's `--serve` is HTTP / SSE, not stdin / stream end. */
const EXPECTED: Record<AgentName | "opencode --serve", Shown> = {
  claude: { injection: "stdin", observation: "stream-end", state: "agent-project-folder", session_id: "chosen" },
  pi: { injection: "stdin", observation: "stream-end", state: "local-jsonl", session_id: "named-file" },
  codex: { injection: "stdin", observation: "stream-end", state: "agent-home", session_id: "learned" },
  gemini: { injection: "stdin", observation: "stream-end", state: "agent-project-folder", session_id: "chosen" },
  opencode: { injection: "stdin", observation: "stream-end", state: "agent-home", session_id: "learned" },
  "opencode --serve": { injection: "http", observation: "sse", state: "remote", session_id: "learned" },
  acp: { injection: "rpc", observation: "rpc-events", state: "agent-home", session_id: "learned" },
};

const EXTRA: Partial<Record<AgentName, string[]>> = { acp: ["--acp-command", "fake-acp"] };

describe("config --agent X --json: the row's axes", () => {
  for (const shown of [...AGENT_NAMES, "opencode --serve"] as const) {
    test(shown, async () => {
      const p = fakeProject("agentport-seam-");
      projects.push(p);
      const [agent, ...flags] = shown.split(" ") as [AgentName, ...string[]];
      const ran = await agentport(["config", "--json", "--agent", agent, ...flags, ...(EXTRA[agent] ?? [])], { cwd: p.proj, env: p.env });
      expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: "" });
      expect((JSON.parse(ran.stdout) as { axes: Shown }).axes).toEqual(EXPECTED[shown]);
    });
  }

  test("the text form says them in words: opencode --serve's prompt is POSTed and its end seen on SSE", async () => {
    const p = fakeProject("agentport-seam-");
    projects.push(p);
    const ran = await agentport(["config", "--agent", "opencode", "--serve"], { cwd: p.proj, env: p.env });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/^axes +prompt in: HTTP .*; end seen: .*SSE.*$/m);
  });
});

describe("--verbose: the axes of the run, beside its argv", () => {
  test("opencode --serve: HTTP / SSE; opencode one-shot: stdin / the stream's end", async () => {
    const p = fakeProject("agentport-seam-");
    projects.push(p);
    const served = await agentport(["run", "--agent", "opencode", "--serve", "--verbose", "--json", "hi"], { cwd: p.proj, env: p.env });
    expect(served.code).toBe(0);
    expect(served.stderr).toMatch(/axes: prompt in: HTTP /);
    const once = await agentport(["run", "--agent", "opencode", "--verbose", "--json", "hi"], { cwd: p.proj, env: p.env });
    expect(once.code).toBe(0);
    expect(once.stderr).toMatch(/axes: prompt in: stdin/);
  });
});

/** A newer release of each probed agent: its fake, with a later --version (and, for codex, a help without --output-schema). */
const NEWER: Partial<Record<AgentName, { version: string; line: string; env: string }>> = {
  pi: { version: "0.99.0", line: "0.99.0", env: "AGENTPORT_PI_BIN" },
  codex: { version: "0.200.0", line: "codex-cli 0.200.0", env: "AGENTPORT_CODEX_BIN" },
  gemini: { version: "0.99.0", line: "0.99.0", env: "AGENTPORT_GEMINI_BIN" },
  opencode: { version: "1.99.0", line: "1.99.0", env: "AGENTPORT_OPENCODE_BIN" },
};

describe("config --agent X: the argv from the capabilities doctor probed, for every probed agent", () => {
  for (const [agent, newer] of Object.entries(NEWER) as [AgentName, NonNullable<(typeof NEWER)[AgentName]>][]) {
    test(`${agent} ${newer.version}`, async () => {
      const p = fakeProject("agentport-seam-");
      projects.push(p);
      const wrapper = join(p.root, "bin", `newer-${agent}`);
      const fake = join(p.root, "bin", `fake-${agent}`);
      // codex 0.200.0 (made up) dropped --output-schema from `exec --help`: the envelope's schema file then stays out of its argv.
      const help =
        agent === "codex" ? `[ "$1 $2" = "exec --help" ] && { "${fake}" exec --help | grep -v -- --output-schema; exit 0; }\n` : "";
      writeFileSync(
        wrapper,
        `#!/bin/sh\n[ "$1" = "--version" ] && { echo "${newer.line}"; echo "${newer.line}" >&2; exit 0; }\n${help}exec "${fake}" "$@"\n`,
      );
      chmodSync(wrapper, 0o755);
      const env = { ...p.env, [newer.env]: wrapper, AGENTPORT_FAKE_PI_DIALECT: "0.85" };
      const assumed = JSON.parse((await agentport(["config", "--json", "--agent", agent, "--envelope"], { cwd: p.proj, env })).stdout) as {
        argv: string[];
        probed: string | null;
      };
      expect(assumed.probed).toBeNull();
      const doctor = await agentport(["doctor", "--agent", agent, "--json"], { cwd: p.proj, env });
      expect((JSON.parse(doctor.stdout) as { agents: { version: string | null }[] }).agents[0]?.version).toBe(newer.version);
      const probed = JSON.parse((await agentport(["config", "--json", "--agent", agent, "--envelope"], { cwd: p.proj, env })).stdout) as {
        argv: string[];
        probed: string | null;
      };
      expect(probed.probed).toBe(newer.version);
      expect(probed.argv[0]).toBe(wrapper);
      if (agent === "codex") {
        expect(assumed.argv).toContain("--output-schema");
        expect(probed.argv).not.toContain("--output-schema");
      }
      // pi 0.99's help (the fake's 0.85 dialect) names sessions by id, where the assumed 0.73.1 names a file.
      if (agent === "pi") {
        expect(assumed.argv).not.toContain("--session-id");
        expect(probed.argv).toContain("--session-id");
      }
    });
  }
});

describe("resume reads who names the session, for every agent whose id is learned", () => {
  for (const agent of AGENT_NAMES.filter((name) => AGENTS[name].axes.sessionId === "learned")) {
    test(`${agent}: a session whose agent never named it is refused before any process starts (exit 2)`, async () => {
      const p = fakeProject("agentport-seam-");
      projects.push(p);
      const first = await agentport(["run", "--agent", agent, ...(EXTRA[agent] ?? []), "--json", "hi"], { cwd: p.proj, env: p.env });
      expect(first.code).toBe(0);
      const id = (JSON.parse(first.stdout) as { session_id: string }).session_id;
      // As when the agent died before its first record named the session.
      const { Database } = await import("bun:sqlite");
      const db = new Database(join(p.root, "state", "ledger.sqlite"));
      db.query("UPDATE sessions SET agent_session_id = NULL WHERE id = ?").run(id);
      db.close();
      const runs = fakeRuns(p).length;
      const again = await agentport(["resume", id, ...(EXTRA[agent] ?? []), "again"], { cwd: p.proj, env: p.env });
      expect({ code: again.code, stderr: again.stderr.trim() }).toEqual({
        code: 2,
        stderr: `[error] session ${id}: ${agent} never named its session (its first phase ended before it did), so there is nothing to resume`,
      });
      expect(fakeRuns(p).length).toBe(runs);
    });
  }
});

describe("each axis field is read: changing it changes what agentport does", () => {
  const env = { HOME: "/h", CODEX_HOME: "/c" };
  const session = (over: Partial<{ agent_session_id: string | null; session_file: string | null }> = {}) => ({
    id: "S1",
    agent_session_id: null,
    session_file: null,
    ...over,
  });

  test("injection / observation: --serve takes the row's served axes (HTTP / SSE), the one-shot its own", () => {
    for (const name of AGENT_NAMES) expect(axesOf(AGENTS[name], false)).toBe(AGENTS[name].axes);
    expect(axesOf(AGENTS.opencode, true)).toMatchObject({ injection: "http", observation: "sse" });
    // An agent without a served mode keeps its axes under --serve (its settings row refuses --serve first).
    expect(axesOf(AGENTS.codex, true)).toBe(AGENTS.codex.axes);
  });

  test("state: the folders kept writable under --isolate are the row's; a session that lives in agentport's JSONL adds its session folder", () => {
    const codex = AGENTS.codex.axes;
    expect(stateFolders(codex, env, "/sessions")).toEqual(["/c"]);
    expect(stateFolders({ ...codex, state: { ...codex.state, folders: ["~/.other"] } }, env, "/sessions")).toEqual(["/h/.other"]);
    expect(stateFolders({ ...codex, state: { ...codex.state, lives: "local-jsonl" } }, env, "/sessions")).toEqual(["/c", "/sessions"]);
  });

  test("session id: a named file must still be there; a learned id must have been learned; a chosen one is always known", () => {
    const dir = mkdtempSync(join(tmpdir(), "agentport-seam-"));
    projects.push({ root: dir } as FakeProject);
    const file = join(dir, "s.jsonl");
    writeFileSync(file, "{}\n");
    const gone = join(dir, "gone.jsonl");
    const pi: Axes = AGENTS.pi.axes;
    expect(resumeRefusal("pi", pi, session({ session_file: file }))).toBeNull();
    expect(resumeRefusal("pi", pi, session({ session_file: gone }))).toBe(`session S1: its pi session file ${gone} is gone`);
    expect(resumeRefusal("pi", { ...pi, sessionId: "chosen" }, session({ session_file: gone }))).toBeNull();
    const codex: Axes = AGENTS.codex.axes;
    expect(resumeRefusal("codex", codex, session())).toMatch(/^session S1: codex never named its session .*nothing to resume$/);
    expect(resumeRefusal("codex", codex, session({ agent_session_id: "T1" }))).toBeNull();
    expect(resumeRefusal("codex", { ...codex, sessionId: "chosen" }, session())).toBeNull();
  });

  test("every row declares all four axes, in the words the code switches on", () => {
    for (const name of AGENT_NAMES) {
      const a = AGENTS[name].axes;
      expect(["stdin", "rpc", "http"]).toContain(a.injection);
      expect(["stream-end", "rpc-events", "sse"]).toContain(a.observation);
      expect(["local-jsonl", "agent-project-folder", "agent-home", "remote"]).toContain(a.state.lives);
      expect(["chosen", "named-file", "learned"]).toContain(a.sessionId);
    }
  });
});

test("docs/agents.md's seed-axes row is the rows' axes", () => {
  const text = readFileSync(join(ROOT, "docs", "agents.md"), "utf8");
  const header = text.split("\n").find((l) => l.startsWith("| | claude |")) ?? "";
  const names = header
    .split("|")
    .slice(2, -1)
    .map((c) => c.trim()) as AgentName[];
  const row = text.split("\n").find((l) => l.startsWith("| seed axes")) ?? "";
  const cell = (a: Axes) => `${a.injection} / ${a.observation} / ${a.state.lives} / ${a.sessionId}`;
  const bold = (a: Axes) => `**${a.injection}** / **${a.observation}** / **${a.state.lives}** / ${a.sessionId}`;
  const expected = names.map((n) =>
    AGENTS[n].served ? `${cell(AGENTS[n].axes)}; \`--serve\`: ${bold(AGENTS[n].served)}` : cell(AGENTS[n].axes),
  );
  expect(
    row
      .split("|")
      .slice(2, -1)
      .map((c) => c.trim()),
  ).toEqual(expected);
});

describe("the traits config and core read (core/agents.ts) agree with each adapter row", () => {
  test("permissionModes: the agents whose row takes --permission-mode, and only those", () => {
    for (const name of AGENT_NAMES)
      expect([name, AGENT_TRAITS[name].permissionModes]).toEqual([name, "how" in AGENTS[name].settings["permission-mode"]]);
  });

  test("toolWords: only an agent whose row takes --tools checks them in a vocabulary", () => {
    for (const name of AGENT_NAMES.filter((n) => AGENT_TRAITS[n].toolWords !== null))
      expect("how" in AGENTS[name].settings.tools).toBe(true);
  });

  test("namedBinary: the agents with --<name>-bin are the binaries of their own name", () => {
    for (const name of AGENT_NAMES) expect(`${AGENTS[name].bin.command}-bin` in BIN_ARGS).toBe(AGENT_TRAITS[name].namedBinary);
  });
});
