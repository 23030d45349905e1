// pi behind the batch's seam (sessions.ts), over pi's RPC mode:
//   one workspace  one pi process for the prime and every arm: switch back to
//                  the prime's file, clone, set the arm's model, prompt
//   per arm        each arm its own `pi --mode rpc --fork <prime file>` in its
//                  workspace; the prime's process closes after it
import { existsSync } from "node:fs";
import { newSessionFile } from "../agents/pi/run.ts";
import { sessionNaming, type PiCapabilities } from "../core/pi/capabilities.ts";
import { ENVELOPE_TOOL } from "../core/pi/reducer.ts";
import type { EnvelopeDelivery } from "../core/instructions.ts";
import type { ProgressSink } from "../core/progress.ts";
import type { PiRpcClient } from "../rpc/client.ts";
import type { BonOptions } from "./options.ts";
import type { PiSessions } from "./pi-sessions.ts";
import type { AgentSession, BonAgent, SessionRequest, Turned } from "./sessions.ts";
import type { Workspace } from "./workspace.ts";

export interface PiSession extends AgentSession {
  client: PiRpcClient;
}

export class PiAgent implements BonAgent<PiSession> {
  readonly name = "pi";
  readonly kind = "rpc";
  readonly sessionDir: string;
  private primeFile: string | null = null;
  /** One workspace: the one process, and where its progress goes now (the prime's view, then each arm's). */
  private shared: PiRpcClient | null = null;
  private sink: ProgressSink | null = null;
  private readonly own = new Map<number, PiRpcClient>();

  constructor(
    private readonly o: BonOptions,
    private readonly caps: PiCapabilities,
    private readonly pi: PiSessions,
  ) {
    this.sessionDir = o.sessionDir;
  }

  get interrupted(): boolean {
    return this.pi.interrupted;
  }

  /** One workspace: each arm an RPC `clone` of the prime; a workspace each: `pi --fork` of its file. */
  get armsFrom(): "clone" | "fork" {
    return this.o.parallel ? "fork" : "clone";
  }

  agentOf(): "pi" {
    return "pi";
  }

  delivery(): EnvelopeDelivery {
    return { tool: ENVELOPE_TOOL };
  }

  declarePrime(primeId: string, cwd: string): AgentSession {
    const naming = sessionNaming(this.caps);
    this.primeFile = naming === "session-file" ? newSessionFile(this.o.sessionDir, primeId, cwd) : null;
    return { sessionFile: this.primeFile, sessionId: naming === "none" ? null : primeId };
  }

  async open(k: number, ws: Workspace, r: SessionRequest): Promise<PiSession> {
    if (!this.o.parallel) return await this.openShared(k, ws, r);
    const fork = k === 0 ? undefined : (this.primeFile ?? "");
    const client = await this.pi.start({
      label: r.label,
      cwd: ws.cwd,
      sessionId: r.sessionId,
      model: r.model,
      progress: r.progress,
      sessionFile: this.primeFile,
      fork,
    });
    this.own.set(k, client);
    if (k > 0) await this.pi.useModel(client, r.model);
    return live(client);
  }

  private async openShared(k: number, ws: Workspace, r: SessionRequest): Promise<PiSession> {
    this.sink = r.progress;
    if (k === 0 || this.shared === null) {
      const forward: ProgressSink = (event) => this.sink?.(event);
      this.shared = await this.pi.start({
        label: r.label,
        cwd: ws.cwd,
        sessionId: r.sessionId,
        model: r.model,
        progress: forward,
        sessionFile: this.primeFile,
      });
      return live(this.shared);
    }
    if (k > 1) await this.shared.switchSession(this.primeFile ?? "");
    const cloned = await this.shared.clone();
    await this.pi.useModel(this.shared, r.model);
    return { client: this.shared, sessionId: cloned.sessionId, sessionFile: cloned.sessionFile };
  }

  turn(session: PiSession, text: string, model: string | null): Promise<Turned> {
    return this.pi.turn(session.client, text, model);
  }

  async primed(session: PiSession): Promise<string> {
    const file = session.client.sessionFile;
    if (file === null || !existsSync(file)) return "pi names no session file for the prime: the arms cannot start from it";
    this.primeFile = file;
    return "";
  }

  async release(k: number): Promise<void> {
    this.sink = null;
    const client = this.own.get(k);
    this.own.delete(k);
    if (client !== undefined) await this.pi.close(client);
  }

  abortAll(): void {
    this.pi.abortAll();
  }

  killAll(): void {
    this.pi.killAll();
  }

  async closeAll(): Promise<void> {
    await this.pi.closeAll();
    this.own.clear();
  }
}

/** The session a process is in now (the prime's: pi may name its file only once it has written it). */
const live = (client: PiRpcClient): PiSession => ({
  client,
  get sessionId() {
    return client.sessionId;
  },
  get sessionFile() {
    return client.sessionFile;
  },
});
