import { defineCommand } from "citty";
import { accessSync, constants, existsSync } from "node:fs";
import { sessionNaming } from "../../core/pi/capabilities.ts";
import { PI_FLAGS } from "../../core/pi/capabilities.ts";
import { resolveBin } from "../../agents/resolve-bin.ts";
import { connectLedger, type Ledger } from "../../io/ledger.ts";
import { ledgerArgs, ledgerChoice } from "../ledger-option.ts";
import { projectConfig } from "../agent-options.ts";
import { stateHome } from "../../io/paths.ts";
import { probePi } from "../../agents/pi-probe.ts";
import { verbosityArgs } from "../common.ts";
import { setVerbosity, writeResult } from "../output.ts";

// Zero tokens: probes what is installed and says what to do about each problem.

interface Finding {
  check: string;
  ok: boolean;
  /** What was found. */
  detail: string;
  /** What to do, when it is not ok. */
  fix?: string;
}

const RPC_TIMEOUT_MS = 15_000;

/** `pi --mode rpc` answers get_state with no prompt, no session and no key: no token spent. */
async function piRpcAnswers(bin: string): Promise<string> {
  const proc = Bun.spawn([bin, "--mode", "rpc", "--no-session"], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
    env: { ...process.env, PI_OFFLINE: "1" },
    timeout: RPC_TIMEOUT_MS,
    killSignal: "SIGKILL",
  });
  proc.stdin.write(`${JSON.stringify({ id: "doctor-1", type: "get_state" })}\n`);
  await proc.stdin.flush();
  const reader = proc.stdout.getReader();
  let text = "";
  try {
    while (!text.includes("\n")) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
  } finally {
    reader.releaseLock();
    await proc.stdin.end();
    proc.kill("SIGTERM");
    await proc.exited;
  }
  const response = JSON.parse(text.split("\n")[0] ?? "null") as { id?: string; success?: boolean; data?: { sessionId?: string } } | null;
  if (response?.id !== "doctor-1" || response.success !== true) throw new Error(`unexpected answer: ${text.slice(0, 120)}`);
  return `get_state answered (session ${response.data?.sessionId ?? "?"})`;
}

async function versionOf(bin: string): Promise<string> {
  const proc = Bun.spawn([bin, "--version"], { stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: RPC_TIMEOUT_MS, killSignal: "SIGKILL" });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  return `${out}${err}`.trim().split("\n")[0] ?? "";
}

export const doctorCommand = defineCommand({
  meta: { name: "doctor", description: "Check the real agents, the ledger and the state folder at zero tokens, and say how to fix what is wrong" },
  args: {
    json: { type: "boolean", description: "One JSON object: every finding" },
    "pi-bin": { type: "string", description: "The pi binary (else $AGENTPORT_PI_BIN, else PATH)" },
    "claude-bin": { type: "string", description: "The claude binary (else $AGENTPORT_CLAUDE_BIN, else PATH)" },
    home: { type: "string", description: "State folder (else $AGENTPORT_HOME, $XDG_STATE_HOME/agentport, ~/.local/state/agentport)" },
    ...ledgerArgs,
    ...verbosityArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    const started = performance.now();
    const findings: (Finding & { ms: number })[] = [];
    // The checks run one after the other: each one's time is the time since the last.
    let last = started;
    const found = (finding: Finding) => {
      const now = performance.now();
      findings.push({ ...finding, ms: Math.round(now - last) });
      last = now;
    };
    const home = stateHome(args.home);
    const choice = ledgerChoice(args, home, await projectConfig(args, process.cwd()));
    let ledger: Ledger | null = null;
    try {
      const opened = await connectLedger(home, choice.location);
      ledger = opened;
      if (choice.location.kind === "sqlite") accessSync(home, constants.W_OK);
      const integrity = await opened.integrityCheck();
      found({ check: "ledger", ok: integrity === "ok", detail: `${opened.path} (schema ${await opened.schemaVersion()}, integrity ${integrity})`, fix: integrity === "ok" ? undefined : "move the file aside; agentport starts a new ledger" });
    } catch (error) {
      const fix = choice.location.kind === "postgres" ? `check that the server ${choice.shown} is up and takes this login, or choose another ledger with --ledger or $AGENTPORT_LEDGER` : `make ${home} writable, or choose another with --home or $AGENTPORT_HOME`;
      found({ check: "ledger", ok: false, detail: (error as Error).message, fix });
    }
    found({ check: "state folder", ok: existsSync(home), detail: home });

    const pi = resolveBin("pi", args["pi-bin"], "AGENTPORT_PI_BIN");
    if (!pi.ok) {
      found({ check: "pi", ok: false, detail: pi.reason, fix: "npm install -g @mariozechner/pi-coding-agent, or point $AGENTPORT_PI_BIN at it" });
    } else if (ledger !== null) {
      try {
        const caps = await probePi(pi.path, ledger, process.env);
        const flags = PI_FLAGS.filter((f) => caps.flags[f]);
        found({ check: "pi", ok: true, detail: `${pi.path}: pi ${caps.version}, sessions named by ${sessionNaming(caps)}; flags: ${flags.join(" ")}` });
        try {
          found({ check: "pi rpc", ok: true, detail: await piRpcAnswers(pi.path) });
        } catch (error) {
          found({ check: "pi rpc", ok: false, detail: (error as Error).message, fix: "run `pi --mode rpc` by hand and look at its stderr" });
        }
      } catch (error) {
        found({ check: "pi", ok: false, detail: `${pi.path}: ${(error as Error).message}`, fix: "check that this binary is pi (`pi --version` prints its version on stderr)" });
      }
    }

    const claude = resolveBin("claude", args["claude-bin"], "AGENTPORT_CLAUDE_BIN");
    if (!claude.ok) {
      found({ check: "claude", ok: false, detail: claude.reason, fix: "npm install -g @anthropic-ai/claude-code, or point $AGENTPORT_CLAUDE_BIN at it" });
    } else {
      const version = await versionOf(claude.path).catch((e: Error) => `error: ${e.message}`);
      const ok = /\d+\.\d+\.\d+/.test(version);
      found({ check: "claude", ok, detail: `${claude.path}: ${version}`, fix: ok ? undefined : "run `claude --version` by hand" });
    }
    await ledger?.close();

    if (args.json) {
      const checks = findings.map((f) => ({ name: f.check, ok: f.ok, ms: f.ms, error: f.ok ? null : f.detail, detail: f.detail, fix: f.fix ?? null }));
      await writeResult(JSON.stringify({ ok: findings.every((f) => f.ok), checks, ms: Math.round(performance.now() - started) }));
    }
    else await writeResult(findings.map((f) => `${f.ok ? "ok  " : "FAIL"} ${f.check.padEnd(12)} ${f.detail}${f.ok || !f.fix ? "" : `\n     → ${f.fix}`}`).join("\n"));
    return findings.every((f) => f.ok) ? 0 : 5;
  },
});
