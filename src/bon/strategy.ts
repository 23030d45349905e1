// Where the prime and the arms work:
//   sequential  one workspace for the prime and every arm, one after the
//               other; reset after each arm (src/bon/workspace.ts)
//   parallel    one workspace per arm, several at once; the prime works in
//               arm 1's (it must leave it as it found it)
// How each gets its agent session is the agent's (src/bon/sessions.ts). The
// arm (src/bon/arm.ts) only sees prepare, harvest and release.
import type { BatchContext } from "./context.ts";
import { cwdIn, harvestWorkspace, makeWorkspace, removeWorkspace, resetWorkspace, type Harvested, type Workspace } from "./workspace.ts";

export interface WorkspaceStrategy {
  readonly mode: "sequential" | "parallel";
  /** How many arms may run at once. */
  readonly lanes: number;
  /** Where arm k (0: the prime) will work: its folder is known before it exists. */
  cwdOf(k: number): string;
  prepare(k: number): Promise<Workspace>;
  harvest(ws: Workspace, label: string): Promise<Harvested>;
  /** After arm k (0: the prime): the workspace made ready for the next, or removed. Notes for the arm; throws a WorkspaceError when the next arm could not start from it. */
  release(k: number, ws: Workspace): Promise<string[]>;
  /** Every workspace removed. */
  releaseAll(): Promise<void>;
}

export function strategyFor(ctx: BatchContext): WorkspaceStrategy {
  return ctx.o.parallel ? new PerArm(ctx) : new Shared(ctx);
}

class Shared implements WorkspaceStrategy {
  readonly mode = "sequential";
  readonly lanes = 1;
  private ws: Workspace | null = null;

  constructor(private readonly ctx: BatchContext) {}

  cwdOf(): string {
    return cwdIn(this.ctx, "shared");
  }

  async prepare(): Promise<Workspace> {
    this.ws ??= await makeWorkspace(this.ctx, "shared");
    return this.ws;
  }

  harvest(ws: Workspace, label: string): Promise<Harvested> {
    return harvestWorkspace(this.ctx, ws, label);
  }

  async release(k: number, ws: Workspace): Promise<string[]> {
    // The prime leaves the workspace as it found it, or the batch stops.
    return k === 0 ? [] : await resetWorkspace(this.ctx, ws);
  }

  async releaseAll(): Promise<void> {
    if (this.ws !== null) await removeWorkspace(this.ctx, this.ws);
    this.ws = null;
  }
}

class PerArm implements WorkspaceStrategy {
  readonly mode = "parallel";
  readonly lanes: number;
  private readonly open = new Map<number, Workspace>();

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

  harvest(ws: Workspace, label: string): Promise<Harvested> {
    return harvestWorkspace(this.ctx, ws, label);
  }

  async release(k: number, ws: Workspace): Promise<string[]> {
    // The prime's workspace is arm 1's.
    if (k === 0) return [];
    this.open.delete(Math.max(1, k));
    await removeWorkspace(this.ctx, ws);
    return [];
  }

  async releaseAll(): Promise<void> {
    for (const ws of this.open.values()) await removeWorkspace(this.ctx, ws);
    this.open.clear();
  }
}
