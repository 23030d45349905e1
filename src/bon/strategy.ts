// Where the prime and the arms run, and how each gets its pi session:
//   sequential  one workspace and one pi process for the prime and every arm:
//               switch back to the prime's file, clone, prompt; the workspace
//               is reset after each arm (src/bon/workspace.ts)
//   parallel    one workspace per arm, each arm its own
//               `pi --mode rpc --fork <prime file>`; the prime runs in arm 1's
//               workspace (it must leave it as it found it) and its process
//               closes after it
// The arm (src/bon/arm.ts) only sees prepare, client, harvest and release.
import type { ProgressSink } from "../core/progress.ts";
import type { PiRpcClient } from "../rpc/client.ts";
import type { BatchContext } from "./context.ts";
import { cwdIn, harvestWorkspace, makeWorkspace, removeWorkspace, resetWorkspace, type Harvested, type Workspace } from "./workspace.ts";

export interface SessionRequest {
  label: string;
  /** agentport's session id (declared already). */
  sessionId: string;
  model: string | null;
  progress: ProgressSink;
  /** Arms only: the prime's session file, which the arm starts from. */
  primeFile: string | null;
}

export interface PiSession {
  client: PiRpcClient;
  /** pi's own id and file of the session the turn runs in (the prime's, a clone's or a fork's). */
  sessionId: string | null;
  sessionFile: string | null;
}

export interface WorkspaceStrategy {
  readonly mode: "sequential" | "parallel";
  /** How many arms may run at once. */
  readonly lanes: number;
  /** Where arm k (0: the prime) will work: its folder is known before it exists. */
  cwdOf(k: number): string;
  prepare(k: number): Promise<Workspace>;
  client(k: number, ws: Workspace, request: SessionRequest): Promise<PiSession>;
  harvest(ws: Workspace, label: string): Promise<Harvested>;
  /** After arm k (0: the prime): the workspace made ready for the next, or removed. Notes for the arm; throws a WorkspaceError when the next arm could not start from it. */
  release(k: number, ws: Workspace): Promise<string[]>;
  /** Every process closed, every workspace removed. */
  releaseAll(): Promise<void>;
}

export function strategyFor(ctx: BatchContext): WorkspaceStrategy {
  return ctx.o.parallel ? new PerArm(ctx) : new Shared(ctx);
}

class Shared implements WorkspaceStrategy {
  readonly mode = "sequential";
  readonly lanes = 1;
  private ws: Workspace | null = null;
  private process: PiRpcClient | null = null;
  /** Where the one process's progress goes now: the prime's view, then each arm's. */
  private sink: ProgressSink | null = null;

  constructor(private readonly ctx: BatchContext) {}

  cwdOf(): string {
    return cwdIn(this.ctx, "shared");
  }

  async prepare(): Promise<Workspace> {
    this.ws ??= await makeWorkspace(this.ctx, "shared");
    return this.ws;
  }

  async client(k: number, ws: Workspace, r: SessionRequest): Promise<PiSession> {
    this.sink = r.progress;
    if (k === 0 || this.process === null) {
      const forward: ProgressSink = (event) => this.sink?.(event);
      this.process = await this.ctx.pi.start({ label: r.label, cwd: ws.cwd, sessionId: r.sessionId, model: r.model, progress: forward, sessionFile: r.primeFile });
      return { client: this.process, sessionId: this.process.sessionId, sessionFile: this.process.sessionFile };
    }
    if (k > 1) await this.process.switchSession(r.primeFile ?? "");
    const cloned = await this.process.clone();
    return { client: this.process, sessionId: cloned.sessionId, sessionFile: cloned.sessionFile };
  }

  harvest(ws: Workspace, label: string): Promise<Harvested> {
    return harvestWorkspace(this.ctx, ws, label);
  }

  async release(k: number, ws: Workspace): Promise<string[]> {
    this.sink = null;
    // The prime leaves the workspace as it found it, or the batch stops.
    return k === 0 ? [] : await resetWorkspace(this.ctx, ws);
  }

  async releaseAll(): Promise<void> {
    await this.ctx.pi.closeAll();
    if (this.ws !== null) await removeWorkspace(this.ctx, this.ws);
    this.ws = null;
  }
}

class PerArm implements WorkspaceStrategy {
  readonly mode = "parallel";
  readonly lanes: number;
  private readonly open = new Map<number, Workspace>();
  private readonly processes = new Map<number, PiRpcClient>();

  constructor(private readonly ctx: BatchContext) {
    this.lanes = Math.max(1, Math.min(ctx.o.jobs, ctx.o.models.length));
  }

  cwdOf(k: number): string {
    return cwdIn(this.ctx, `arm-${Math.max(1, k)}`);
  }

  async prepare(k: number): Promise<Workspace> {
    const arm = Math.max(1, k);
    const made = this.open.get(arm);
    if (made !== undefined) return made;
    const ws = await makeWorkspace(this.ctx, `arm-${arm}`);
    this.open.set(arm, ws);
    return ws;
  }

  async client(k: number, ws: Workspace, r: SessionRequest): Promise<PiSession> {
    const fork = k === 0 ? undefined : (r.primeFile ?? "");
    const client = await this.ctx.pi.start({ label: r.label, cwd: ws.cwd, sessionId: r.sessionId, model: r.model, progress: r.progress, sessionFile: r.primeFile, fork });
    this.processes.set(k, client);
    return { client, sessionId: client.sessionId, sessionFile: client.sessionFile };
  }

  harvest(ws: Workspace, label: string): Promise<Harvested> {
    return harvestWorkspace(this.ctx, ws, label);
  }

  async release(k: number, ws: Workspace): Promise<string[]> {
    const client = this.processes.get(k);
    this.processes.delete(k);
    if (client !== undefined) await this.ctx.pi.close(client);
    // The prime's workspace is arm 1's.
    if (k === 0) return [];
    this.open.delete(Math.max(1, k));
    await removeWorkspace(this.ctx, ws);
    return [];
  }

  async releaseAll(): Promise<void> {
    await this.ctx.pi.closeAll();
    this.processes.clear();
    for (const ws of this.open.values()) await removeWorkspace(this.ctx, ws);
    this.open.clear();
  }
}
