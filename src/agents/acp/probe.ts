// `agentport doctor --agent acp --acp-command CMD`: start the ACP agent, send
// `initialize` only (no session, no prompt: zero tokens), and say what it
// answered (its name, version, protocol and capabilities, its auth methods),
// then stop its process tree.
import { isUtf8 } from "node:buffer";
import { agentFacts } from "../../core/acp/permission.ts";
import { ACP_PROTOCOL_VERSION } from "../../core/acp/protocol.ts";
import { LineFramer, type LineSink } from "../../core/frame.ts";
import { objectOf, type Json } from "../../core/record.ts";
import { clean } from "../../core/text.ts";
import { command as commandWords } from "../../config/values.ts";
import { AgentProcess, SpawnError } from "../../io/agent-process.ts";
import { VERSION } from "../../version.ts";
import type { Finding } from "../adapter.ts";
import { resolveBin } from "../resolve-bin.ts";

// opencode acp 1.18.33 took 30 s to answer in a fresh home on a busy 2-core box (its first start sets itself up).
const PROBE_MS = 60_000;
const MAX_PROBE_LINE = 1024 * 1024;

/** initialize's answer (or the line that says why there is none), from the agent's stdout. */
class InitializeAnswer implements LineSink {
  result: Json | null = null;
  problem: string | null = null;

  line(text: string): void {
    let message: Json | null = null;
    try {
      message = objectOf(JSON.parse(text));
    } catch {
      // A log line on stdout: an ACP agent must not, but the answer may still come.
      return;
    }
    if (message?.id !== 1) return;
    const error = objectOf(message.error);
    if (error !== null) this.problem = `initialize failed: ${clean(error.message, 200)}`;
    else this.result = objectOf(message.result) ?? {};
  }
  oversize(): void {}
  framingError(what: string): void {
    this.problem = `its stdout broke the framing (${what})`;
  }
  unterminated(text: string): void {
    this.line(text);
  }
  done(): boolean {
    return this.result !== null || this.problem !== null;
  }
}

export async function probeAcpCommand(raw: string, env: Record<string, string | undefined>, cwd: string): Promise<Finding[]> {
  const words = commandWords("--acp-command", raw);
  if (!words.ok) return [{ check: "acp", ok: false, detail: words.issue, fix: "--acp-command 'gemini --acp'" }];
  const [name = "", ...rest] = words.value;
  const bin = resolveBin(name, name.includes("/") ? name : undefined, "AGENTPORT_ACP_BIN");
  if (!bin.ok) return [{ check: "acp", ok: false, detail: bin.reason, fix: "install the ACP agent, or name its path in --acp-command" }];
  const started = performance.now();
  let proc: AgentProcess;
  try {
    proc = AgentProcess.spawn({ argv: [bin.path, ...rest], cwd, env, stdin: "pipe", stderrFile: "/dev/null", graceMs: 1_000 });
  } catch (error) {
    if (error instanceof SpawnError)
      return [{ check: "acp", ok: false, detail: error.message, fix: "install the ACP agent, or name its path in --acp-command" }];
    throw error;
  }
  const answer = new InitializeAnswer();
  const framer = new LineFramer(answer, MAX_PROBE_LINE, { isUtf8 });
  proc.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: ACP_PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: { name: "agentport-doctor", version: VERSION } } })}\n`,
  );
  const timer = setTimeout(() => proc.stdout.cancel(), PROBE_MS);
  try {
    for (;;) {
      const chunk = await proc.stdout.read();
      if (chunk === null) break;
      framer.push(chunk);
      if (answer.done()) break;
    }
  } finally {
    clearTimeout(timer);
    // Its stdin closed, an ACP agent ends; one that does not is stopped after the grace.
    await proc.endStdin();
    await proc.finish();
  }
  const ms = Math.round(performance.now() - started);
  const shown = [bin.path, ...rest].join(" ");
  if (answer.result === null) {
    const why =
      answer.problem ??
      (performance.now() - started >= PROBE_MS
        ? `no answer to initialize in ${PROBE_MS / 1000} s`
        : "it ended without answering initialize");
    const tail = clean(proc.stderrTail().trim().split("\n").slice(-1)[0] ?? "", 200);
    return [
      {
        check: "acp",
        ok: false,
        detail: `${shown}: ${why}${tail ? ` (stderr: ${tail})` : ""}`,
        fix: "check that the command starts an ACP agent on stdin/stdout (gemini --acp, opencode acp)",
      },
    ];
  }
  const facts = agentFacts(answer.result);
  const auth = (Array.isArray(answer.result.authMethods) ? answer.result.authMethods : [])
    .map((m) => clean(objectOf(m)?.id, 60))
    .filter(Boolean);
  const detail = `${shown}: ${facts.agent_name || "unnamed"} ${facts.agent_version || "(no version)"}, protocol ${facts.protocol_version}, capabilities ${facts.agent_capabilities || "none"}${auth.length > 0 ? `, auth ${auth.join(",")}` : ""} (initialize only, ${ms} ms)`;
  if (facts.protocol_version !== ACP_PROTOCOL_VERSION)
    return [
      {
        check: "acp",
        ok: false,
        detail,
        fix: `agentport speaks ACP protocol ${ACP_PROTOCOL_VERSION}; use a version of the agent that does`,
      },
    ];
  return [{ check: "acp", ok: true, detail, version: String(facts.agent_version || "") || undefined }];
}
