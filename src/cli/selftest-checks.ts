// The self-test's own checks (framing, claude, the ledger, pi and its RPC,
// resume, timeout, stall, loop, linger), then the agents' and the ACP server's:
// the full list `agentport selftest` runs, each in its own folder.
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { LineFramer, type LineSink } from "../core/frame.ts";
import { parseCapabilities, type PiCapabilities } from "../core/pi/capabilities.ts";
import { newSessionFile } from "../agents/pi/run.ts";
import { PiRpcClient } from "../rpc/client.ts";
import type { RunOutcome } from "../agents/phase.ts";
import { ledgerPath } from "../io/ledger.ts";
import { waitGone } from "../io/proc.ts";
import { selfArgv } from "./self.ts";
import type { FakeName } from "../core/agents.ts";
import { AGENT_CHECKS, CheckFailed, expect, phase } from "./selftest-agents.ts";
import { ACP_SERVER_CHECK } from "./selftest-acp.ts";

export interface Check {
  name: string;
  run: (ctx: Context) => Promise<void> | void;
}

export interface Context {
  /** A fresh folder for this check: the agent's cwd and the state home live under it. */
  dir: string;
  home: string;
  claude: string;
  pi: string;
  fakes: Record<FakeName, string>;
}

const describe = (o: RunOutcome) =>
  `status ${o.verdict.status}, exit ${o.exitCode}: ${o.verdict.failure?.message ?? "no failure"}${o.verdict.summary.stopped_by ? ` (stopped by ${o.verdict.summary.stopped_by})` : ""}`;

/** One claude phase through the table, its fake playing `scenario`. */
async function fakeClaude(
  ctx: Context,
  scenario: string,
  flags: Record<string, string> = {},
  env: Record<string, string> = {},
): Promise<RunOutcome> {
  return (await phase(ctx, "claude", scenario, undefined, { "loop-repeat": "5", ...flags }, env)).outcome;
}

/** The fake pi's capabilities, read the way the real probe reads pi's --version and --help. */
async function fakePiCaps(ctx: Context, dialect: string): Promise<PiCapabilities> {
  const env = { ...process.env, AGENTPORT_FAKE_PI_DIALECT: dialect };
  const read = async (flag: string) => {
    const proc = Bun.spawn([ctx.pi, flag], { stdin: "ignore", stdout: "pipe", stderr: "pipe", env });
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    await proc.exited;
    return `${out}\n${err}`;
  };
  const [version, help] = await Promise.all([read("--version"), read("--help")]);
  return parseCapabilities(version, help);
}

/** One pi phase through the table, in the dialect of pi `dialect`, with the envelope and agentport's extension required. */
async function fakePiPhase(ctx: Context, dialect: string, scenario: string): Promise<RunOutcome> {
  const flags = { model: "standin/standin-model", direct: true, envelope: true, "require-ext": "agentport", "loop-repeat": "5" };
  const { outcome } = await phase(ctx, "pi", scenario, undefined, flags, { AGENTPORT_FAKE_PI_DIALECT: dialect });
  const version = dialect === "0.85" ? "0.85.0" : "0.73.1";
  expect(outcome.verdict.agent_version === version, `the fake pi said version ${outcome.verdict.agent_version}`);
  return outcome;
}

export const CHECKS: Check[] = [
  {
    name: "framing: LF only, CRLF, U+2028, split UTF-8, oversize skipped, unterminated last line",
    run() {
      const lines: string[] = [];
      const events: string[] = [];
      const sink: LineSink = {
        line: (t) => lines.push(t),
        oversize: (n) => events.push(`oversize(${n})`),
        framingError: (w) => events.push(`error:${w}`),
        unterminated: (t) => events.push(`unterminated:${t}`),
      };
      const framer = new LineFramer(sink, 16);
      const enc = new TextEncoder();
      const euro = enc.encode("€"); // three bytes, split across two chunks
      framer.push(enc.encode("a\r\nb\u2028c\n"));
      framer.push(euro.subarray(0, 1));
      framer.push(Uint8Array.of(...euro.subarray(1), 0x0a));
      framer.push(enc.encode(`${"x".repeat(40)}\nok\nrest`));
      framer.end();
      expect(lines.join("|") === "a|b\u2028c|€|ok", `lines were ${JSON.stringify(lines)}`);
      expect(events[0] === "oversize(16)", `events were ${JSON.stringify(events)}`);
      expect(events[1] === "unterminated:rest", `events were ${JSON.stringify(events)}`);
    },
  },
  {
    name: "claude: a successful run gives its final text and cost",
    async run(ctx) {
      const o = await fakeClaude(ctx, "tools");
      expect(o.exitCode === 0 && o.verdict.ok, describe(o));
      expect(o.verdict.text === "Done.", `text was ${JSON.stringify(o.verdict.text)}`);
      expect(o.verdict.cost_micro_usd === 12300, `cost was ${o.verdict.cost_micro_usd}`);
    },
  },
  {
    name: "claude: an API error after retries fails the run (exit 1)",
    async run(ctx) {
      const o = await fakeClaude(ctx, "api-error");
      expect(o.exitCode === 1 && o.verdict.status === "failed", describe(o));
      expect(
        o.verdict.failure?.kind === "provider_error" && o.verdict.failure.message.includes("api_error_status 500"),
        `failure was ${JSON.stringify(o.verdict.failure)}`,
      );
    },
  },
  {
    name: "ledger: the session row is committed before the agent starts",
    async run(ctx) {
      // The fake looks its own id up in the ledger the moment it starts, and refuses to run without it.
      const o = await fakeClaude(ctx, "text", {}, { AGENTPORT_FAKE_CHECK_LEDGER: ledgerPath(ctx.home) });
      expect(o.exitCode === 0 && o.verdict.ok, describe(o));
    },
  },
  {
    name: "pi 0.73.1: a phase on the session file named before the call, with its envelope",
    async run(ctx) {
      const o = await fakePiPhase(ctx, "0.73.1", "envelope");
      expect(o.exitCode === 0 && o.verdict.ok, describe(o));
      expect((o.verdict.envelope as { status?: string } | null)?.status === "success", "no envelope");
      const sessions = join(ctx.home, "pi-sessions");
      const header = JSON.parse(readFileSync(join(sessions, readdirOne(sessions)), "utf8").split("\n")[0] ?? "{}");
      expect(header.id === o.verdict.session_id, `pi used session ${header.id}, agentport named ${o.verdict.session_id}`);
    },
  },
  {
    name: "pi 0.85: a phase with --session-id and --approve",
    async run(ctx) {
      const o = await fakePiPhase(ctx, "0.85", "envelope");
      expect(o.exitCode === 0 && o.verdict.ok, describe(o));
    },
  },
  {
    name: "pi rpc: a prime turn, a refused dialog, two clones from the same prime with their own cost",
    async run(ctx) {
      const caps = await fakePiCaps(ctx, "0.73.1");
      const sessionDir = join(ctx.home, "pi-sessions");
      const id = crypto.randomUUID();
      const turn = (text: string, input: number) => [{ text, usage: { input, output: 10, cost: input / 1e6 } }];
      const scenario = {
        turns: [
          [{ confirm: { title: "Delete the build folder?" } }, ...turn("Primed.", 1000)],
          turn("Arm one.", 200),
          turn("Arm two.", 300),
        ],
      };
      const client = await PiRpcClient.start({
        bin: ctx.pi,
        caps,
        cwd: ctx.dir,
        env: { ...process.env, AGENTPORT_FAKE_SCENARIO: JSON.stringify(scenario), AGENTPORT_FAKE_PI_DIALECT: "0.73.1" },
        sessionDir,
        sessionFile: newSessionFile(sessionDir, id, ctx.dir),
        sessionId: id,
        model: "standin/standin-model",
        gateway: "",
        direct: true,
        extensions: [],
        stderrFile: join(ctx.dir, "rpc-stderr.log"),
        maxLineBytes: 1024 * 1024,
        commandTimeoutMs: 5_000,
        graceMs: 300,
      });
      try {
        const prime = await client.prompt("Read the spec");
        expect(prime.verdict.ok, `prime: ${prime.verdict.failure}`);
        expect(prime.verdict.refused[0]?.kind === "dialog", `refused: ${JSON.stringify(prime.verdict.refused)}`);
        const primeFile = client.sessionFile ?? "";
        const arms: number[] = [];
        for (const k of [1, 2]) {
          if (k > 1) await client.switchSession(primeFile);
          const clone = await client.clone();
          expect(clone.parentId === id, `clone ${k} came from ${clone.parentId}`);
          const arm = await client.prompt(`Implement, arm ${k}`);
          expect(arm.verdict.ok, `arm ${k}: ${arm.verdict.failure}`);
          arms.push(arm.session.tokens?.input ?? -1);
        }
        // Each clone pays only its own turn, not the prime's history it carries.
        expect(arms[0] === 200 && arms[1] === 300, `per-clone input tokens were ${arms.join(", ")}`);
      } finally {
        await client.close();
      }
    },
  },
  {
    name: "resume: refused from another folder before any process starts (exit 3)",
    async run(ctx) {
      const first = await fakeClaude(ctx, "text");
      expect(first.verdict.ok, describe(first));
      const elsewhere = join(ctx.dir, "elsewhere");
      mkdirSync(elsewhere);
      const proc = Bun.spawn(
        [
          ...selfArgv(),
          "resume",
          first.verdict.session_id ?? "",
          "--cwd",
          elsewhere,
          "--home",
          ctx.home,
          "--claude-bin",
          "/nonexistent/claude",
          "again",
        ],
        {
          stdin: "ignore",
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      const err = await new Response(proc.stderr).text();
      const code = await proc.exited;
      expect(code === 3, `exit ${code}: ${err.trim()}`);
      expect(err.includes(`was born in ${ctx.dir}`), `stderr was ${err.trim()}`);
    },
  },
  {
    name: "timeout: the whole process group is killed (exit 4)",
    async run(ctx) {
      const pidFile = join(ctx.dir, "grandchild.pid");
      // Long enough for the fake to start its grandchild on a loaded machine.
      const o = await fakeClaude(ctx, "hang", { timeout: "1.2" }, { AGENTPORT_FAKE_PIDFILE: pidFile });
      expect(o.exitCode === 4 && o.verdict.status === "timeout", describe(o));
      expect(existsSync(pidFile), "the fake never started its grandchild before the timeout");
      const grandchild = Number(readFileSync(pidFile, "utf8"));
      // Killed with the group; give the kernel a moment to deliver the KILL.
      expect(grandchild > 0 && (await waitGone(grandchild, 2_000)), `the grandchild ${grandchild} is still alive`);
    },
  },
  {
    name: "stall: no output for the stall time stops the run (exit 4)",
    async run(ctx) {
      const o = await fakeClaude(ctx, "stall", { stall: "0.3" });
      expect(o.exitCode === 4 && o.verdict.status === "stalled", describe(o));
    },
  },
  {
    name: "loop: the same tool call K times stops the run and names the tool (exit 4)",
    async run(ctx) {
      const o = await fakeClaude(ctx, "loop", { "loop-repeat": "3" });
      expect(o.exitCode === 4 && o.verdict.status === "looping", describe(o));
      expect(
        o.verdict.failure?.cause === "loop" && o.verdict.failure.message === "looping: the same Read call 3 times in a row",
        `failure was ${JSON.stringify(o.verdict.failure)}`,
      );
    },
  },
  {
    name: "linger: a process alive after its result is ended and its verdict kept",
    async run(ctx) {
      const o = await fakeClaude(ctx, "linger");
      expect(o.exitCode === 0 && o.verdict.ok, describe(o));
      expect(o.verdict.summary.stopped_by === "linger", `stopped_by was ${o.verdict.summary.stopped_by}`);
    },
  },
];

// The other agents of the adapter table, through their fakes; then agentport as an ACP agent.
CHECKS.push(...AGENT_CHECKS, ACP_SERVER_CHECK);

function readdirOne(dir: string): string {
  const names = readdirSync(dir);
  if (names.length !== 1) throw new CheckFailed(`expected one session file in ${dir}, found ${names.length}`);
  return names[0] as string;
}
