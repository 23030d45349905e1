// The batch's pi processes: started with the batch's flags and environment,
// each turn judged (a pi that died during it is a failed turn, not an
// exception), every process aborted on Ctrl-C and closed in every case.
import { join } from "node:path";
import { compileSchema, type EnvelopeCheck } from "../core/envelope.ts";
import { envelopeInstructions } from "../core/instructions.ts";
import type { PiCapabilities } from "../core/pi/capabilities.ts";
import { ENVELOPE_TOOL } from "../core/pi/reducer.ts";
import type { ProgressSink } from "../core/progress.ts";
import { piThinking, piTools } from "../core/translate.ts";
import { killAgent } from "../io/agent-process.ts";
import { PiRpcClient, PiRpcError } from "../rpc/client.ts";
import type { Refused } from "../core/verdict.ts";
import type { BonOptions } from "./options.ts";
import { causeOfVerdict } from "./result.ts";
import { errorMessage, noTurn, turnOf, type Turned } from "./sessions.ts";

export interface StartRequest {
  label: string;
  cwd: string;
  sessionId: string;
  model: string | null;
  progress: ProgressSink;
  /** The session file to open (one process for the prime and every arm), or null. */
  sessionFile: string | null;
  /** `pi --fork FILE`: a process of its own for an arm. */
  fork?: string;
}

/** A route `provider/id` as set_model wants it. */
export function splitRoute(route: string): { provider: string; modelId: string } {
  const slash = route.indexOf("/");
  return slash <= 0 ? { provider: route, modelId: route } : { provider: route.slice(0, slash), modelId: route.slice(slash + 1) };
}

export class PiSessions {
  private readonly clients = new Set<PiRpcClient>();
  private readonly check: (value: unknown) => EnvelopeCheck;
  /** What the model is told about the envelope (core/instructions.ts). */
  private readonly instructions: string;
  private abortTimer: Timer | null = null;
  private readonly outsideSeen = new Map<PiRpcClient, number>();

  constructor(
    private readonly o: BonOptions,
    private readonly caps: PiCapabilities,
    private readonly batch: { id: string; runDir: string; extension: string; schemaFile: string; gitCeiling: Record<string, string> },
  ) {
    const compiled = compileSchema(o.schema);
    if (!compiled.ok) throw new Error(`the envelope schema: ${compiled.error}`);
    this.check = compiled.check;
    this.instructions = envelopeInstructions(o.schema, { tool: ENVELOPE_TOOL });
  }

  get interrupted(): boolean {
    return this.o.signal?.aborted === true;
  }

  inventoryFile(label: string): string {
    return join(this.batch.runDir, `${label}.inventory.json`);
  }

  async start(r: StartRequest): Promise<PiRpcClient> {
    const o = this.o;
    const client = await PiRpcClient.start({
      bin: o.bin,
      caps: this.caps,
      cwd: r.cwd,
      env: {
        ...o.env,
        AGENTPORT_INVENTORY_FILE: this.inventoryFile(r.label),
        AGENTPORT_PI_VERSION: this.caps.version,
        AGENTPORT_ENVELOPE_TOOL: ENVELOPE_TOOL,
        AGENTPORT_ENVELOPE_SCHEMA: this.batch.schemaFile,
        AGENTPORT_ENVELOPE_DESCRIPTION: this.instructions,
        AGENTPORT_PHASE: r.label,
        AGENTPORT_RUN_ID: this.batch.id,
        ...this.batch.gitCeiling,
      },
      sessionDir: o.sessionDir,
      sessionFile: r.fork === undefined ? r.sessionFile : null,
      sessionId: r.sessionId,
      model: r.model ?? undefined,
      gateway: "",
      direct: true,
      thinking: piThinking(o.thinking),
      tools: o.tools && piTools(o.tools),
      extensions: [this.batch.extension],
      envelopeTool: ENVELOPE_TOOL,
      appendSystemPrompt: this.instructions,
      stderrFile: join(this.batch.runDir, `${r.label}.stderr.log`),
      fork: r.fork,
      commandTimeoutMs: o.commandTimeoutMs,
      turnTimeoutMs: o.turnTimeoutMs,
      turnGraceMs: o.turnGraceMs,
      stallMs: o.stallMs,
      loopRepeat: o.loopRepeat,
      budget: o.budget,
      maxLineBytes: o.maxLineBytes,
      onProgress: r.progress,
      inventoryFile: this.inventoryFile(r.label),
      graceMs: o.graceMs,
    });
    this.clients.add(client);
    return client;
  }

  /** The arm's model, when the session is not on it already. */
  async useModel(client: PiRpcClient, model: string | null): Promise<void> {
    if (model === null || (await client.state()).model === model) return;
    const { provider, modelId } = splitRoute(model);
    await client.setModel(provider, modelId);
  }

  async close(client: PiRpcClient): Promise<void> {
    await client.close();
    this.clients.delete(client);
  }

  /** One turn, judged; with the dialogs pi asked for since the last turn, outside any turn (refused by the client too). */
  async turn(client: PiRpcClient, text: string, route: string | null): Promise<Turned> {
    if (this.interrupted) return noTurn("interrupted before the turn started", "interrupted");
    try {
      const result = await client.prompt(text, { envelope: this.check, requireExt: this.o.requireExt, route });
      // `session`: now minus when the client entered this session (a clone: at clone) — the arm's own.
      return turnOf(result.verdict, result.session, this.refusedOutside(client));
    } catch (error) {
      const verdict = error instanceof PiRpcError ? (error.details.verdict ?? null) : null;
      const turned = noTurn(errorMessage(error), verdict !== null ? causeOfVerdict(verdict) : "failed", verdict);
      return { ...turned, refused: [...this.refusedOutside(client), ...turned.refused] };
    }
  }

  /** The client's refusals outside a turn not yet given to a turn. */
  private refusedOutside(client: PiRpcClient): Refused[] {
    const seen = this.outsideSeen.get(client) ?? 0;
    this.outsideSeen.set(client, client.refusedOutside.length);
    return client.refusedOutside.slice(seen);
  }

  /** Ctrl-C: abort every turn now, and again each second (a turn about to start is caught by the next round). */
  abortAll(): void {
    const round = () => {
      if (this.clients.size === 0 && this.abortTimer !== null) {
        clearInterval(this.abortTimer);
        this.abortTimer = null;
      }
      for (const client of this.clients) void client.abort().catch(() => {});
    };
    round();
    this.abortTimer ??= setInterval(round, 1_000);
  }

  /** Synchronous, for process exit: no pi of ours may survive agentport. */
  killAll(): void {
    for (const client of this.clients) killAgent(client.pid);
  }

  async closeAll(): Promise<void> {
    if (this.abortTimer !== null) clearInterval(this.abortTimer);
    this.abortTimer = null;
    await Promise.all([...this.clients].map((c) => this.close(c).catch(() => {})));
  }
}
