// The self-test's check of the server direction: `agentport acp` fronting the
// fake claude, driven over ACP by a few lines of JSON-RPC from here, offline and
// at zero tokens.
import { isUtf8 } from "node:buffer";
import { join } from "node:path";
import { ACP_PROTOCOL_VERSION, RPC_ERRORS } from "../core/acp/protocol.ts";
import { LineFramer } from "../core/frame.ts";
import { objectOf, type Json } from "../core/record.ts";
import { clean } from "../core/text.ts";
import { selfArgv } from "./self.ts";
import { type AgentCheck, expect } from "./selftest-agents.ts";

const DEADLINE_MS = 20_000;

/** `agentport acp` as a child, its stdout read as one JSON-RPC message a line. */
class Served {
  private readonly messages: Json[] = [];
  private wake: () => void = () => {};
  private ended = false;
  private readonly deadline = performance.now() + DEADLINE_MS;
  private readonly stderr: Promise<string>;
  readonly proc;

  constructor(argv: string[], cwd: string, env: Record<string, string>) {
    this.proc = Bun.spawn(argv, { cwd, env: { ...process.env, ...env }, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    this.stderr = new Response(this.proc.stderr).text();
    void this.pump();
  }

  private async pump(): Promise<void> {
    const keep = (text: string) => this.messages.push(objectOf(safeParse(text)) ?? { unparsed: clean(text, 200) });
    const framer = new LineFramer({ line: keep, unterminated: keep, oversize: () => {}, framingError: () => {} }, 1024 * 1024, { isUtf8 });
    for await (const chunk of this.proc.stdout) {
      framer.push(chunk);
      this.wake();
    }
    framer.end();
    this.ended = true;
    this.wake();
  }

  send(line: string): void {
    this.proc.stdin.write(`${line}\n`);
    this.proc.stdin.flush();
  }

  request(id: number, method: string, params: Json): void {
    this.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
  }

  /** The first message that matches, read so far or later; the check fails when the server ends or the deadline passes first. */
  async waitFor(what: string, match: (m: Json) => boolean): Promise<Json> {
    for (;;) {
      const found = this.messages.find(match);
      if (found !== undefined) return found;
      const left = this.deadline - performance.now();
      if (this.ended || left <= 0) {
        this.proc.kill("SIGKILL");
        const tail = clean((await this.stderr).trim().split("\n").at(-1), 300);
        expect(false, `no ${what} from agentport acp (${this.ended ? `it ended, exit ${await this.proc.exited}` : "deadline"}): ${tail}`);
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, Math.max(left, 0));
      });
    }
  }

  updates(sessionId: string): Json[] {
    return this.messages
      .filter((m) => m.method === "session/update" && objectOf(m.params)?.sessionId === sessionId)
      .map((m) => objectOf(objectOf(m.params)?.update) ?? {});
  }

  async close(): Promise<number> {
    this.proc.stdin.end();
    return this.proc.exited;
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

const answerTo = (id: number | null) => (m: Json) => m.id === id && m.method === undefined;

export const ACP_SERVER_CHECK: AgentCheck = {
  name: "agentport acp: over ACP, fronting the fake claude: initialize, session/new, a prompt's tool updates and end_turn with the verdict in _meta.agentport; a hostile line answered with a JSON-RPC error while the prompt goes on",
  async run(ctx) {
    const argv = [
      ...selfArgv(),
      "acp",
      "--agent",
      "claude",
      "--claude-bin",
      ctx.fakes["fake-claude"],
      "--home",
      ctx.home,
      "--linger",
      "0.2",
    ];
    const served = new Served(argv, ctx.dir, { AGENTPORT_FAKE_SCENARIO: "tools", HOME: join(ctx.dir, "agent-home"), NO_COLOR: "1" });
    try {
      served.request(1, "initialize", { protocolVersion: ACP_PROTOCOL_VERSION, clientCapabilities: {} });
      const init = objectOf((await served.waitFor("answer to initialize", answerTo(1))).result);
      expect(objectOf(init?.agentInfo)?.name === "agentport", `initialize answered ${JSON.stringify(init)}`);
      served.request(2, "session/new", { cwd: ctx.dir, mcpServers: [] });
      const made = await served.waitFor("answer to session/new", answerTo(2));
      const sessionId = objectOf(made.result)?.sessionId;
      expect(typeof sessionId === "string", `session/new answered ${JSON.stringify(made)}`);
      served.request(3, "session/prompt", { sessionId: sessionId as string, prompt: [{ type: "text", text: "selftest" }] });
      // While the prompt runs: a line that is not JSON gets its error, and serving goes on.
      served.send("{not json");
      const hostile = objectOf((await served.waitFor("error for the hostile line", answerTo(null))).error);
      expect(hostile?.code === RPC_ERRORS.parse, `the hostile line got ${JSON.stringify(hostile)}`);
      const answer = await served.waitFor("answer to session/prompt", answerTo(3));
      const result = objectOf(answer.result);
      const verdict = objectOf(objectOf(objectOf(result?._meta)?.agentport)?.verdict);
      expect(
        result?.stopReason === "end_turn" && verdict?.status === "completed" && verdict.ok === true && verdict.session_id === sessionId,
        `session/prompt answered ${clean(JSON.stringify(answer), 400)}`,
      );
      const updates = served.updates(sessionId as string);
      const kinds = updates.filter((u) => u.sessionUpdate === "tool_call").map((u) => u.kind);
      expect(kinds.join(",") === "read,execute,read", `the tool calls forwarded were ${JSON.stringify(kinds)}`);
      const last = objectOf(updates.at(-1)?.content);
      expect(last?.text === "Done.", `the last update was ${JSON.stringify(updates.at(-1))}`);
      const code = await served.close();
      expect(code === 0, `agentport acp exited ${code} when its stdin closed`);
    } finally {
      served.proc.kill("SIGKILL");
    }
  },
};
