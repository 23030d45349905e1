// A small ACP client for the tests: spawns `agentport acp …` (the compiled
// binary) and speaks JSON-RPC lines to it; every line it answers is kept.
import type { Subprocess } from "bun";
import { BIN } from "./helpers.ts";

export interface Message {
  jsonrpc: "2.0";
  id?: number | string | null;
  method?: string;
  params?: Record<string, any>;
  result?: any;
  error?: { code: number; message: string; data?: any };
}

export class AcpPeer {
  readonly received: Message[] = [];
  readonly rawLines: string[] = [];
  private stderrText = "";
  private nextId = 1000;
  private readonly proc: Subprocess<"pipe", "pipe", "pipe">;
  private readonly waiters: (() => void)[] = [];
  readonly done: Promise<number>;

  constructor(args: string[], opts: { cwd: string; env: Record<string, string> }) {
    this.proc = Bun.spawn([BIN, "acp", ...args], {
      cwd: opts.cwd,
      env: { ...process.env, NO_COLOR: "1", ...opts.env },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    void this.pump();
    void new Response(this.proc.stderr).text().then((t) => (this.stderrText = t));
    this.done = this.proc.exited;
  }

  get pid(): number {
    return this.proc.pid;
  }

  get stderr(): string {
    return this.stderrText;
  }

  private async pump(): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of this.proc.stdout) {
      buffer += decoder.decode(chunk, { stream: true });
      let lf: number;
      while ((lf = buffer.indexOf("\n")) !== -1) {
        const line = buffer.slice(0, lf);
        buffer = buffer.slice(lf + 1);
        this.rawLines.push(line);
        this.received.push(JSON.parse(line) as Message);
        for (const w of this.waiters.splice(0)) w();
      }
    }
    for (const w of this.waiters.splice(0)) w();
  }

  /** Writes raw bytes (a line, or part of one). */
  writeRaw(data: string | Uint8Array): void {
    this.proc.stdin.write(data);
    this.proc.stdin.flush();
  }

  send(message: Record<string, unknown>): void {
    this.writeRaw(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  }

  /** Sends a request and waits for its answer. */
  async request(method: string, params?: unknown, timeoutMs = 60_000): Promise<Message> {
    const id = this.nextId++;
    const from = this.received.length;
    this.send({ id, method, ...(params === undefined ? {} : { params }) });
    return this.waitFor((m) => m.id === id && m.method === undefined && this.received.indexOf(m) >= from, timeoutMs);
  }

  /** The first message (received so far or later) that matches. */
  async waitFor(match: (m: Message) => boolean, timeoutMs = 60_000): Promise<Message> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const found = this.received.find(match);
      if (found !== undefined) return found;
      if (performance.now() > deadline)
        throw new Error(
          `no matching message in ${timeoutMs} ms; got ${JSON.stringify(this.received).slice(0, 800)}; stderr ${this.stderrText.slice(0, 400)}`,
        );
      await Promise.race([new Promise<void>((r) => this.waiters.push(r)), Bun.sleep(100)]);
    }
  }

  updates(sessionId: string): Record<string, any>[] {
    return this.received.filter((m) => m.method === "session/update" && m.params?.sessionId === sessionId).map((m) => m.params!.update);
  }

  async initialize(): Promise<Message> {
    return this.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "test", version: "1" },
    });
  }

  /** Closes stdin: the server cancels what runs, then exits. */
  async close(): Promise<number> {
    await this.proc.stdin.end();
    return this.done;
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): void {
    this.proc.kill(signal);
  }
}
