// opencode behind the batch's seam (sessions.ts), one process per session:
//   prime   `opencode run --format json`, the reading turn; opencode names
//           the session (`ses_…`) in its first record
//   arm     in the prime's folder: `run -s PRIME --fork`; in a workspace of
//           its own: a copy of the prime (`export` once, `import` of the copy
//           in the workspace, src/core/opencode/session-copy.ts) and
//           `run -s COPY` there, since opencode keeps a fork in the source's
//           folder and runs its tools there
import { realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { opencodeArgv } from "../agents/opencode/argv.ts";
import { exportSession, importSession } from "../agents/opencode/sessions-cli.ts";
import { copySession } from "../core/opencode/session-copy.ts";
import { OpencodeReducer } from "../core/opencode/reducer.ts";
import { judge } from "../core/judge.ts";
import { Supervisor } from "../core/supervisor.ts";
import { killAgent } from "../io/agent-process.ts";
import { drive, SpawnError } from "../io/spawn.ts";
import { envelopeOfText } from "../agents/stream-phase.ts";
import { NOT_STARTED, OpencodeAgent, sameFolder, turnedOf } from "./opencode-common.ts";
import { errorMessage, noTurn, type AgentSession, type BonAgent, type SessionRequest, type Turned } from "./sessions.ts";
import type { Workspace } from "./workspace.ts";

export interface OneShotSession extends AgentSession {
  label: string;
  cwd: string;
  /** `-s ID`: the session continued (the prime's with `fork`, or the arm's copy). */
  resume: string | null;
  fork: boolean;
  sessionId: string | null;
  progress: SessionRequest["progress"];
}

export class OpencodeOneShot extends OpencodeAgent implements BonAgent<OneShotSession> {
  readonly kind = "one-shot";

  /** In the prime's folder an arm forks it; in a workspace of its own, a copy of it is imported there. */
  get armsFrom(): "clone" | "fork" {
    return this.o.parallel ? "clone" : "fork";
  }
  private prime: { id: string; cwd: string } | null = null;
  private exported: Promise<string> | null = null;
  private readonly running = new Set<number>();

  async open(k: number, ws: Workspace, r: SessionRequest): Promise<OneShotSession> {
    const session = { label: r.label, cwd: ws.cwd, resume: null, fork: false, sessionId: null, sessionFile: null, progress: r.progress };
    const prime = this.prime;
    if (k === 0 || prime === null) return session;
    if (sameFolder(ws.cwd, prime.cwd)) return { ...session, resume: prime.id, fork: true };
    const copy = await this.copyOfPrime(ws.cwd, r.label);
    return { ...session, resume: copy, sessionId: copy };
  }

  /** The prime exported once, copied for `cwd` and imported there: the copy's id. */
  private async copyOfPrime(cwd: string, label: string): Promise<string> {
    const prime = this.prime!;
    this.exported ??= exportSession(this.o.bin, prime.id, prime.cwd, this.env("export"), this.track);
    const copied = copySession(await this.exported, realpathSync(cwd));
    if (!copied.ok) throw new Error(`the prime's export: ${copied.error}`);
    // The conversation as opencode keeps it, unredacted: on disk only until opencode has taken it.
    const file = join(this.batch.runDir, `${label}.session.json`);
    writeFileSync(file, copied.json, { mode: 0o600 });
    try {
      await importSession(this.o.bin, file, cwd, this.env(label), this.track);
    } finally {
      rmSync(file, { force: true });
    }
    return copied.id;
  }

  async turn(session: OneShotSession, text: string, model: string | null): Promise<Turned> {
    if (this.interrupted) return NOT_STARTED;
    const supervisor = new Supervisor({
      timeoutMs: this.o.turnTimeoutMs,
      stallMs: this.o.stallMs,
      loopRepeat: this.o.loopRepeat,
      budget: this.o.budget,
    });
    const reducer = new OpencodeReducer({
      cwd: session.cwd,
      emit: session.progress,
      loop: supervisor.loop,
      onSession: (id) => (session.sessionId = id),
    });
    const argv = opencodeArgv({ bin: this.o.bin, model: model ?? undefined, resumeSession: session.resume ?? undefined });
    if (session.fork) argv.push("--fork");
    try {
      const result = await drive({
        argv,
        cwd: session.cwd,
        env: this.env(session.label),
        stdin: this.envelope.prompt(text),
        stderrFile: join(this.batch.runDir, `${session.label}.stderr.log`),
        reducer,
        maxLineBytes: this.o.maxLineBytes,
        supervisor,
        graceMs: this.o.graceMs,
        settled: () => reducer.finished(),
        signal: this.o.signal,
        onSpawn: (pid) => this.track(pid, true),
      });
      this.track(result.pid, false);
      const read = reducer.reduction();
      return turnedOf(
        judge({
          agent: "opencode",
          sessionId: session.sessionId,
          proc: result,
          facts: supervisor.facts(),
          reduction: read,
          envelope: envelopeOfText({ check: this.envelope.check, file: "" }, read.text),
        }),
      );
    } catch (error) {
      return noTurn(errorMessage(error), error instanceof SpawnError ? "environment" : "failed");
    }
  }

  async primed(session: OneShotSession): Promise<string> {
    if (session.sessionId === null) return "opencode named no session for the prime: the arms cannot start from it";
    this.prime = { id: session.sessionId, cwd: session.cwd };
    return "";
  }

  async release(): Promise<void> {
    // Each turn's process is gone when its turn ends.
  }

  abortAll(): void {
    // The batch's signal stops every running turn (drive).
  }

  killAll(): void {
    for (const pid of this.running) killAgent(pid);
  }

  async closeAll(): Promise<void> {
    this.running.clear();
  }

  private readonly track = (pid: number, running: boolean): void => {
    if (running) this.running.add(pid);
    else this.running.delete(pid);
  };
}
