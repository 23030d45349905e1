// The fake pi: speaks `pi -p --mode json` (and plain `-p` text) as captured
// from pi 0.73.1, scripted by a scenario, in two dialects chosen by
// $AGENTPORT_FAKE_PI_DIALECT: "0.73.1" (default, the pi on npm) and "0.85"
// (the seed's pi: --session-id, --approve, `--`, entry_appended). It takes
// pi's own argv, reads stdin to EOF like pi, keeps pi's session files and
// follows pi's order of checks, so agentport drives it exactly as the real one.
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { runRpc } from "./pi-rpc.ts";
import { BUILTIN_SCENARIOS, ScenarioSchema, type Scenario, type Step, type Usage } from "./pi-scenarios.ts";
import { closeStdout, resolveScenario, startGrandchild, writeHugeLine, writeOut } from "./runtime.ts";
import { logInvocation } from "./claude.ts";

export type PiDialect = "0.73.1" | "0.85";
const VERSION: Record<PiDialect, string> = { "0.73.1": "0.73.1", "0.85": "0.85.0" };
const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"];
const BUILTIN_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"];
const DEFAULT_TOOLS = ["read", "bash", "edit", "write"];
const REPORT_TOOL = "report_phase";
export const INVENTORY_TYPE = "agentport-inventory";
export const API = "openai-completions";

export type Json = Record<string, unknown>;
type Diagnostic = { type: "error" | "warning"; message: string };

/** Thrown to end the fake with an exit code, after its message went to stderr. */
class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

// ---------------------------------------------------------------- arguments

interface PiArgs {
  messages: string[];
  fileArgs: string[];
  /** Unknown long flags, as pi holds them for extensions before rejecting them. */
  unknownFlags: Map<string, string | true>;
  diagnostics: Diagnostic[];
  help: boolean;
  version: boolean;
  mode?: "text" | "json" | "rpc";
  print: boolean;
  continue: boolean;
  resume: boolean;
  provider?: string;
  model?: string;
  noSession: boolean;
  session?: string;
  fork?: string;
  sessionDir?: string;
  noTools: boolean;
  noBuiltinTools: boolean;
  tools?: string[];
  thinking?: string;
  extensions: string[];
  listModels?: string | true;
  export?: string;
  /** 0.85 only. */
  sessionId?: string;
  approve: boolean;
}

/** pi 0.73.1's parseArgs (dist/cli/args.js), plus the three 0.85 flags when that dialect speaks. */
export function parsePiArgs(args: string[], dialect: PiDialect): PiArgs {
  const r: PiArgs = {
    messages: [],
    fileArgs: [],
    unknownFlags: new Map(),
    diagnostics: [],
    help: false,
    version: false,
    print: false,
    continue: false,
    resume: false,
    noSession: false,
    noTools: false,
    noBuiltinTools: false,
    extensions: [],
    approve: false,
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    const hasValue = i + 1 < args.length;
    const value = () => args[++i] ?? "";
    if (dialect === "0.85" && arg === "--") {
      r.messages.push(...args.slice(i + 1));
      break;
    } else if (dialect === "0.85" && arg === "--session-id" && hasValue) r.sessionId = value();
    else if (dialect === "0.85" && arg === "--approve") r.approve = true;
    else if (arg === "--help" || arg === "-h") r.help = true;
    else if (arg === "--version" || arg === "-v") r.version = true;
    else if (arg === "--mode" && hasValue) {
      const mode = value();
      if (mode === "text" || mode === "json" || mode === "rpc") r.mode = mode;
    } else if (arg === "--continue" || arg === "-c") r.continue = true;
    else if (arg === "--resume" || arg === "-r") r.resume = true;
    else if (arg === "--provider" && hasValue) r.provider = value();
    else if (arg === "--model" && hasValue) r.model = value();
    else if ((arg === "--api-key" || arg === "--system-prompt" || arg === "--append-system-prompt" || arg === "--models") && hasValue) value();
    else if (arg === "--no-session") r.noSession = true;
    else if (arg === "--session" && hasValue) r.session = value();
    else if (arg === "--fork" && hasValue) r.fork = value();
    else if (arg === "--session-dir" && hasValue) r.sessionDir = value();
    else if (arg === "--no-tools" || arg === "-nt") r.noTools = true;
    else if (arg === "--no-builtin-tools" || arg === "-nbt") r.noBuiltinTools = true;
    else if ((arg === "--tools" || arg === "-t") && hasValue)
      r.tools = value()
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
    else if (arg === "--thinking" && hasValue) {
      const level = value();
      if (THINKING_LEVELS.includes(level)) r.thinking = level;
      else r.diagnostics.push({ type: "warning", message: `Invalid thinking level "${level}". Valid values: ${THINKING_LEVELS.join(", ")}` });
    } else if (arg === "--print" || arg === "-p") {
      r.print = true;
      const next = args[i + 1];
      if (next !== undefined && !next.startsWith("@") && (!next.startsWith("-") || next.startsWith("---"))) {
        r.messages.push(next);
        i++;
      }
    } else if (arg === "--export" && hasValue) r.export = value();
    else if ((arg === "--extension" || arg === "-e") && hasValue) r.extensions.push(value());
    else if ((arg === "--skill" || arg === "--prompt-template" || arg === "--theme") && hasValue) value();
    else if (
      ["--no-extensions", "-ne", "--no-skills", "-ns", "--no-prompt-templates", "-np", "--no-themes", "--no-context-files", "-nc", "--verbose", "--offline"].includes(arg)
    )
      continue;
    else if (arg === "--list-models") {
      const next = args[i + 1];
      r.listModels = next !== undefined && !next.startsWith("-") && !next.startsWith("@") ? value() : true;
    } else if (arg.startsWith("@")) r.fileArgs.push(arg.slice(1));
    else if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      if (eq !== -1) r.unknownFlags.set(arg.slice(2, eq), arg.slice(eq + 1));
      else {
        const next = args[i + 1];
        if (next !== undefined && !next.startsWith("-") && !next.startsWith("@")) {
          r.unknownFlags.set(arg.slice(2), next);
          i++;
        } else r.unknownFlags.set(arg.slice(2), true);
      }
    } else if (arg.startsWith("-")) r.diagnostics.push({ type: "error", message: `Unknown option: ${arg}` });
    else r.messages.push(arg);
  }
  return r;
}

/** `--scenario X` is the fake's own flag: pi never sees it. */
function withoutScenarioFlag(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--scenario") i++;
    else out.push(argv[i] ?? "");
  }
  return out;
}

export function piDialect(value = process.env.AGENTPORT_FAKE_PI_DIALECT): PiDialect {
  if (value === undefined || value === "" || value === "0.73.1") return "0.73.1";
  if (value === "0.85" || value === "0.85.0") return "0.85";
  throw new Error(`AGENTPORT_FAKE_PI_DIALECT must be 0.73.1 or 0.85, not "${value}"`);
}

// ---------------------------------------------------------------- sessions

const expandTilde = (p: string): string => (p === "~" ? homedir() : p.startsWith("~/") ? join(homedir(), p.slice(2)) : p);
export const agentDir = (): string => (process.env.PI_CODING_AGENT_DIR ? expandTilde(process.env.PI_CODING_AGENT_DIR) : join(homedir(), ".pi", "agent"));
const sessionsRoot = (): string => join(agentDir(), "sessions");
const fileStamp = (iso: string): string => iso.replace(/[:.]/g, "-");

/** pi's default session dir for a cwd: `<agent dir>/sessions/--<cwd, / replaced by ->--/`, created on the way. */
function defaultSessionDir(cwd: string): string {
  const dir = join(sessionsRoot(), `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function readJson(path: string): Json {
  try {
    const value: unknown = JSON.parse(readFileSync(path, "utf8"));
    return value && typeof value === "object" ? (value as Json) : {};
  } catch {
    return {};
  }
}

/** settings.json as pi merges it: the agent dir's, then the project's `.pi/settings.json`. */
function loadSettings(cwd: string): Json {
  const global = readJson(join(agentDir(), "settings.json"));
  const project = readJson(join(cwd, ".pi", "settings.json"));
  const retry = { ...((global.retry as Json | undefined) ?? {}), ...((project.retry as Json | undefined) ?? {}) };
  return { ...global, ...project, retry };
}

function loadEntries(path: string): Json[] {
  if (!existsSync(path)) return [];
  const entries: Json[] = [];
  for (const line of readFileSync(path, "utf8").trim().split("\n")) {
    if (!line.trim()) continue;
    try {
      entries.push(JSON.parse(line) as Json);
    } catch {
      // pi skips malformed lines
    }
  }
  const header = entries[0];
  if (!header || header.type !== "session" || typeof header.id !== "string") return [];
  return entries;
}

interface SessionInfo {
  path: string;
  id: string;
  cwd: string;
  mtime: number;
}

function listSessions(dir: string): SessionInfo[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
  } catch {
    return [];
  }
  const out: SessionInfo[] = [];
  for (const name of names) {
    const path = join(dir, name);
    try {
      const first = readFileSync(path, "utf8").split("\n")[0] ?? "";
      const header = JSON.parse(first) as Json;
      if (header.type !== "session" || typeof header.id !== "string") continue;
      out.push({ path, id: header.id, cwd: typeof header.cwd === "string" ? header.cwd : "", mtime: statSync(path).mtimeMs });
    } catch {
      // not a session file
    }
  }
  return out.sort((a, b) => b.mtime - a.mtime);
}

function listAllSessions(): SessionInfo[] {
  const root = sessionsRoot();
  let dirs: string[];
  try {
    dirs = readdirSync(root, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(root, d.name));
  } catch {
    return [];
  }
  return dirs.flatMap(listSessions).sort((a, b) => b.mtime - a.mtime);
}

/** pi's SessionManager, reduced to what a one-shot run touches: the file appears at the first assistant message. */
export class SessionStore {
  entries: Json[] = [];
  file: string | undefined;
  private flushed = false;
  private ids = new Set<string>();
  private leafId: string | null = null;

  private constructor(
    public cwd: string,
    readonly dir: string,
    readonly persist: boolean,
  ) {
    if (persist && dir) mkdirSync(dir, { recursive: true });
  }

  get header(): Json {
    return this.entries[0] ?? {};
  }
  get id(): string {
    return String(this.header.id);
  }
  get hasMessages(): boolean {
    return this.entries.some((e) => e.type === "message");
  }
  get hasThinkingEntry(): boolean {
    return this.entries.some((e) => e.type === "thinking_level_change");
  }
  /** The last entry's id (what an RPC clone branches at). */
  get leaf(): string | null {
    return this.leafId;
  }

  /**
   * RPC `clone`: a new session in the same dir and the same cwd, its header naming this file as
   * parentSession, holding copies of this one's entries (same ids); written at once.
   */
  static cloneOf(source: SessionStore): SessionStore {
    const dir = source.file ? dirname(source.file) : source.dir;
    const store = new SessionStore(source.cwd, dir, source.persist);
    store.fresh(undefined, source.file ? resolve(source.file) : undefined);
    const copied = source.entries.slice(1).filter((e) => e.type !== "session").map((e) => structuredClone(e));
    store.entries = [store.header, ...copied];
    for (const e of copied) {
      if (typeof e.id !== "string") continue;
      store.ids.add(e.id);
      store.leafId = e.id;
    }
    if (store.persist && store.file) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(store.file, store.entries.map((e) => `${JSON.stringify(e)}\n`).join(""));
      store.flushed = true;
    }
    return store;
  }

  static create(cwd: string, dir: string, id?: string): SessionStore {
    const store = new SessionStore(cwd, dir, true);
    store.fresh(id);
    return store;
  }

  static inMemory(cwd: string, id?: string): SessionStore {
    const store = new SessionStore(cwd, "", false);
    store.fresh(id);
    return store;
  }

  /** `--session <path>`: an existing file is loaded (and pi runs in its header's cwd); a missing one becomes a new session there. */
  static open(path: string, dir: string | undefined, cwdOverride?: string): SessionStore {
    const file = resolve(path);
    const loaded = loadEntries(file);
    const headerCwd = loaded[0]?.cwd;
    const cwd = cwdOverride ?? (typeof headerCwd === "string" ? headerCwd : process.cwd());
    const store = new SessionStore(cwd, dir ?? dirname(file), true);
    store.setFile(file, loaded);
    return store;
  }

  private setFile(file: string, loaded: Json[]): void {
    this.file = file;
    if (existsSync(file)) {
      if (loaded.length === 0) {
        // Empty or corrupt: pi truncates it to a fresh header.
        this.fresh();
        this.file = file;
        writeFileSync(file, `${this.entries.map((e) => JSON.stringify(e)).join("\n")}\n`);
        this.flushed = true;
        return;
      }
      this.entries = loaded;
      for (const e of loaded.slice(1)) {
        if (typeof e.id === "string") {
          this.ids.add(e.id);
          this.leafId = e.id;
        }
      }
      this.flushed = true;
    } else {
      this.fresh();
      this.file = file;
    }
  }

  private fresh(id?: string, parentSession?: string): void {
    const timestamp = new Date().toISOString();
    const header: Json = { type: "session", version: 3, id: id ?? Bun.randomUUIDv7(), timestamp, cwd: this.cwd };
    if (parentSession) header.parentSession = parentSession;
    this.entries = [header];
    this.ids.clear();
    this.leafId = null;
    this.flushed = false;
    if (this.persist) this.file = join(this.dir, `${fileStamp(timestamp)}_${String(header.id)}.jsonl`);
  }

  /** pi's forkFrom: a new session in `cwd` holding a copy of the source's entries, written at once. */
  static fork(sourcePath: string, cwd: string, dir: string | undefined): SessionStore {
    const source = loadEntries(sourcePath);
    if (source.length === 0) throw new PiFailure(`Error: Cannot fork: source session file is empty or invalid: ${sourcePath}`);
    const targetDir = dir ?? defaultSessionDir(cwd);
    mkdirSync(targetDir, { recursive: true });
    const id = Bun.randomUUIDv7();
    const timestamp = new Date().toISOString();
    const file = join(targetDir, `${fileStamp(timestamp)}_${id}.jsonl`);
    const header = { type: "session", version: 3, id, timestamp, cwd, parentSession: resolve(sourcePath) };
    appendFileSync(file, `${JSON.stringify(header)}\n`);
    for (const entry of source.slice(1)) appendFileSync(file, `${JSON.stringify(entry)}\n`);
    return SessionStore.open(file, targetDir, cwd);
  }

  private newId(): string {
    for (;;) {
      const id = crypto.randomUUID().slice(0, 8);
      if (!this.ids.has(id)) return id;
    }
  }

  /** Append an entry (`type` plus fields); ids chain through parentId like pi's. */
  append(fields: Json): Json {
    const entry: Json = { type: fields.type, id: this.newId(), parentId: this.leafId, timestamp: new Date().toISOString() };
    for (const [k, v] of Object.entries(fields)) if (k !== "type") entry[k] = v;
    this.entries.push(entry);
    this.ids.add(String(entry.id));
    this.leafId = String(entry.id);
    this.persistEntry(entry);
    return entry;
  }

  /**
   * pi's _persist: nothing reaches the disk before the first assistant message;
   * then every entry held in memory is appended (the header too, even when the
   * file already starts with it), then each new entry as it comes.
   */
  private persistEntry(entry: Json): void {
    if (!this.persist || !this.file) return;
    const hasAssistant = this.entries.some((e) => e.type === "message" && (e.message as Json | undefined)?.role === "assistant");
    if (!hasAssistant) {
      this.flushed = false;
      return;
    }
    if (!this.flushed) {
      mkdirSync(dirname(this.file), { recursive: true });
      appendFileSync(this.file, this.entries.map((e) => `${JSON.stringify(e)}\n`).join(""));
      this.flushed = true;
    } else {
      appendFileSync(this.file, `${JSON.stringify(entry)}\n`);
    }
  }
}

/** A failure pi reports on stderr with exit 1. */
class PiFailure extends Error {}

// ---------------------------------------------------------------- the run

/** RPC only: what an abort command does to a running prompt. Sleeps, hangs, retry delays and slow replies end early. */
export class AbortState {
  requested = false;
  private wakers = new Set<() => void>();

  request(): void {
    this.requested = true;
    for (const wake of this.wakers) wake();
    this.wakers.clear();
  }

  reset(): void {
    this.requested = false;
  }

  /** Sleep `ms` (Infinity: until an abort); true when an abort ended it (or had already come). */
  pause(ms: number): Promise<boolean> {
    if (this.requested) return Promise.resolve(true);
    return new Promise((done) => {
      let timer: Timer | undefined;
      const wake = () => {
        if (timer !== undefined) clearTimeout(timer);
        done(true);
      };
      this.wakers.add(wake);
      if (Number.isFinite(ms))
        timer = setTimeout(() => {
          this.wakers.delete(wake);
          done(false);
        }, ms);
    });
  }
}

/** RPC only: the extension UI sub-protocol, as pi's createDialogPromise speaks it. */
export interface DialogUi {
  /** Resolves true only when the client answered `confirmed: true`. */
  confirm(title: string, message: string, timeout?: number): Promise<boolean>;
}

export interface RunContext {
  /** Events go to stdout (json and RPC modes). */
  json: boolean;
  session: SessionStore;
  provider: string;
  model: string;
  enabledTools: Set<string>;
  retry: { enabled: boolean; maxRetries: number; baseDelayMs: number };
  /** RPC: dialogs reach the client; without it (json, -p) ctx.hasUI is false and a confirm is refused at once. */
  ui?: DialogUi;
  /** RPC: the abort command's flag. */
  abort?: AbortState;
}

type Block = Json & { type: "text" | "thinking" | "toolCall" };
interface Call {
  block: Block;
  name: string;
  args: Json;
  result: string;
  isError: boolean;
  details?: Json;
  envelope?: { data: Json; invalid: boolean; error?: string; text: string; usage?: Usage };
  /** An extension's confirm in the tool_call hook. */
  confirm?: ConfirmSpec;
  /** A write tool call that really writes this file. */
  write?: { path: string; content: string };
}
type ConfirmSpec = Extract<Step, { confirm: unknown }>["confirm"];
const isCallStep = (s: Step | undefined): boolean => s !== undefined && ("tool" in s || "envelope" in s || "writeFile" in s);

const ZERO_USAGE = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const round = (n: number): number => Number(n.toPrecision(12));
const clone = <T>(value: T): T => structuredClone(value);

function usageOf(u: Usage): Json {
  // 1.5 $/M input, 15 $/M output, 0.15 $/M cache read, 1.875 $/M cache write.
  const parts = { input: u.input * 1.5e-6, output: u.output * 15e-6, cacheRead: u.cacheRead * 0.15e-6, cacheWrite: u.cacheWrite * 1.875e-6 };
  const sum = parts.input + parts.output + parts.cacheRead + parts.cacheWrite;
  if (u.cost !== undefined) {
    if (sum > 0) for (const k of Object.keys(parts) as (keyof typeof parts)[]) parts[k] = (parts[k] * u.cost) / sum;
    else parts.input = u.cost;
  }
  const cost = { input: round(parts.input), output: round(parts.output), cacheRead: round(parts.cacheRead), cacheWrite: round(parts.cacheWrite), total: round(u.cost ?? sum) };
  const tokens = { input: u.input, output: u.output, cacheRead: u.cacheRead, cacheWrite: u.cacheWrite, totalTokens: u.input + u.output + u.cacheRead + u.cacheWrite };
  return u.noCost ? tokens : { ...tokens, cost };
}

/** The text in up to 3 pieces, as the standin streamed it. */
function pieces(text: string): string[] {
  if (text.length === 0) return [];
  const size = Math.max(1, Math.ceil(text.length / 3));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** pi's retryable-error test (agent-session.js _isRetryableError). */
const RETRYABLE =
  /overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|connection.?refused|connection.?lost|websocket.?closed|websocket.?error|other side closed|fetch failed|upstream.?connect|reset before headers|socket hang up|ended without|http2 request did not get a response|timed? out|timeout|terminated|retry delay/i;

export class PiRun {
  private provider: string;
  private model: string;
  private responses = 0;
  private calls = 0;
  private retryAttempt = 0;
  private runOpen = false;
  private runMessages: Json[] = [];
  private turnAssistant: Json | null = null;
  private turnToolResults: Json[] = [];
  /** The run ended in failure: later message steps of this prompt are skipped. */
  private failed = false;
  /** The conversation as pi's agent state holds it (retried errors removed), for text mode. */
  private lastMessage: Json | null = null;
  /** A confirm step waiting for the next tool call. */
  private pendingConfirm: ConfirmSpec | undefined;

  constructor(
    private readonly scenario: Scenario,
    private readonly ctx: RunContext,
  ) {
    this.provider = ctx.provider;
    this.model = ctx.model;
  }

  async emit(event: Json): Promise<void> {
    if (this.ctx.json) await writeOut(`${JSON.stringify(event)}\n`);
    if (event.type === "message_end") {
      const message = event.message as Json;
      this.ctx.session.append({ type: "message", message });
      this.lastMessage = message;
    }
  }

  /** RPC set_model: the following messages are this model's. */
  setModel(provider: string, model: string): void {
    this.provider = provider;
    this.model = model;
  }

  private abortRequested(): boolean {
    return this.ctx.abort?.requested === true;
  }

  /** Sleep; in RPC an abort ends it early (true). */
  private pause(ms: number): Promise<boolean> {
    if (this.ctx.abort) return this.ctx.abort.pause(ms);
    if (!Number.isFinite(ms)) return new Promise(() => setInterval(() => {}, 1 << 30));
    return Bun.sleep(ms).then(() => false);
  }

  /** One prompt: its agent run, plus the continue() runs of auto-retries. Returns an exit code to stop the process with. */
  async prompt(text: string, steps: Step[] = this.scenario.steps): Promise<number | undefined> {
    this.failed = false;
    this.retryAttempt = 0;
    this.pendingConfirm = undefined;
    const user = { role: "user", content: [{ type: "text", text }], timestamp: Date.now() };
    this.runOpen = true;
    this.runMessages = [user];
    this.turnAssistant = null;
    this.turnToolResults = [];
    await this.emit({ type: "agent_start" });
    await this.emit({ type: "turn_start" });
    await this.emit({ type: "message_start", message: user });
    await this.emit({ type: "message_end", message: user });

    let held: { blocks: Block[]; calls: Call[]; usage?: Usage; chunkDelayMs?: number } = { blocks: [], calls: [] };
    const flushHeld = async () => {
      if (held.blocks.length > 0 && !this.failed) await this.assistant(held.blocks, held.calls.length > 0 ? "toolUse" : "stop", held.usage, held.chunkDelayMs);
      const calls = held.calls;
      held = { blocks: [], calls: [] };
      if (calls.length > 0 && !this.failed) await this.executeTools(calls);
    };
    for (let i = 0; i < steps.length; i++) {
      if (this.abortRequested()) {
        // pi's abort: the model call in flight (or the next one) ends "aborted", then agent_end.
        held = { blocks: [], calls: [] };
        if (!this.failed) await this.aborted("");
        break;
      }
      const step = steps[i] as Step;
      // A confirm step sits between a message and the tool call it guards: look past it.
      let j = i + 1;
      while (steps[j] !== undefined && "confirm" in (steps[j] as Step)) j++;
      const next = steps[j];
      const nextIsCall = isCallStep(next);
      const nextJoins = next !== undefined && "tool" in next && next.tool.parallel;
      if ("confirm" in step) {
        if (nextIsCall) this.pendingConfirm = step.confirm;
        else {
          await flushHeld();
          if (this.ctx.ui) await this.ctx.ui.confirm(step.confirm.title, step.confirm.message, step.confirm.timeout);
        }
        continue;
      }
      if ("thinking" in step) {
        held.blocks.push({ type: "thinking", thinking: step.thinking });
        continue;
      }
      if ("text" in step) {
        if (held.calls.length > 0) await flushHeld();
        held.blocks.push({ type: "text", text: step.text });
        held.usage = step.usage ?? held.usage;
        held.chunkDelayMs = step.chunkDelayMs ?? held.chunkDelayMs;
        if (!nextIsCall) await flushHeld();
        continue;
      }
      if ("tool" in step || "envelope" in step || "writeFile" in step) {
        if (held.calls.length > 0 && !("tool" in step && step.tool.parallel)) await flushHeld();
        const call = this.call(step);
        held.blocks.push(call.block);
        held.calls.push(call);
        held.usage = step.usage ?? held.usage;
        if (!nextJoins) {
          const envelope = held.calls.findLast((c) => c.envelope)?.envelope;
          await flushHeld();
          // The model's short closing message after report_phase.
          if (envelope && !this.failed) await this.assistant([{ type: "text", text: envelope.text }], "stop", envelope.usage);
        }
        continue;
      }
      await flushHeld();
      const code = await this.other(step);
      if (code !== undefined) return code;
    }
    await flushHeld();
    // Aborted while the last tools ran: the next model call is the aborted one.
    if (this.abortRequested() && !this.failed && this.runOpen && this.turnToolResults.length > 0) await this.aborted("");
    await this.closeRun();
    return undefined;
  }

  private call(step: Extract<Step, { tool: unknown }> | Extract<Step, { envelope: unknown }> | Extract<Step, { writeFile: unknown }>): Call {
    this.calls += 1;
    const confirm = this.pendingConfirm;
    this.pendingConfirm = undefined;
    if ("writeFile" in step) {
      const { path, content } = step.writeFile;
      const id = `call_write_${this.calls}`;
      const args = { path, content };
      return { block: { type: "toolCall", id, name: "write", arguments: args }, name: "write", args, result: `Successfully wrote ${content.length} bytes to ${path}`, isError: false, confirm, write: args };
    }
    if ("tool" in step) {
      const t = step.tool;
      const id = `call_${t.name.replace(/[^A-Za-z0-9]/g, "")}_${this.calls}`;
      return {
        block: { type: "toolCall", id, name: t.name, arguments: t.args },
        name: t.name,
        args: t.args,
        result: t.result.replaceAll("${cwd}", process.cwd()),
        isError: t.isError,
        details: t.details,
        confirm,
      };
    }
    const id = `call_report_${this.calls}`;
    return {
      block: { type: "toolCall", id, name: REPORT_TOOL, arguments: step.envelope },
      name: REPORT_TOOL,
      args: step.envelope,
      result: "reported",
      isError: false,
      details: step.envelope,
      envelope: { data: step.envelope, invalid: step.invalid, error: step.errorText, text: step.reply, usage: step.usage },
      confirm,
    };
  }

  /** Steps after the run (json mode's `after`): an exit code to stop with, or undefined. */
  async afterRun(steps: Step[]): Promise<number | undefined> {
    for (const step of steps) {
      const code = await this.other(step);
      if (code !== undefined) return code;
    }
    return undefined;
  }

  /** Steps that are not part of a model answer. */
  private async other(step: Step): Promise<number | undefined> {
    if ("error" in step) {
      const message = step.error.message ?? `${step.error.status} standin error ${step.error.status}`;
      for (let n = 0; n < step.error.times && !this.failed; n++) await this.failedAttempt(message);
    } else if ("aborted" in step) {
      if (!this.failed) await this.aborted(step.partial);
    } else if ("model" in step) {
      const slash = step.model.indexOf("/");
      this.provider = step.model.slice(0, slash);
      this.model = step.model.slice(slash + 1);
    } else if ("oversize" in step) {
      if (!this.failed) await this.oversize(step.oversize);
    } else if ("raw" in step) {
      await writeOut(step.lf ? `${step.raw}\n` : step.raw);
    } else if ("stderr" in step) {
      process.stderr.write(step.stderr);
    } else if ("sleep" in step) {
      // A model call taking its time: an abort cuts it, and it ends "aborted".
      if ((await this.pause(step.sleep)) && !this.failed && this.runOpen) await this.aborted("");
    } else if ("exit" in step) {
      return step.exit;
    } else if ("signal" in step) {
      process.kill(process.pid, step.signal);
      await Bun.sleep(1_000);
    } else if ("closeStdout" in step) {
      await closeStdout();
    } else if ("hang" in step) {
      if (step.ignoreTerm) {
        process.removeAllListeners("SIGTERM");
        process.on("SIGTERM", () => {});
      }
      if (step.ignoreAbort || !this.ctx.abort) await new Promise(() => setInterval(() => {}, 1 << 30));
      if ((await this.pause(Number.POSITIVE_INFINITY)) && !this.failed && this.runOpen) await this.aborted("");
    } else if ("grandchild" in step) {
      await startGrandchild(step.grandchild);
    } else if ("shell" in step) {
      const run = Bun.spawnSync(["sh", "-c", step.shell], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      process.stderr.write(`${run.stdout.toString()}${run.stderr.toString()}`);
    } else if ("fetch" in step) {
      const said = await fetch(step.fetch, { signal: AbortSignal.timeout(3_000) }).then(
        (r) => `${r.status}`,
        (error: unknown) => `failed ${(error as Error).message}`,
      );
      process.stderr.write(`fetch ${step.fetch}: ${said}\n`);
    }
    return undefined;
  }

  /** A retry runs through continue(): a new agent_start/turn_start, no user message. */
  private async openRun(): Promise<void> {
    if (this.runOpen) return;
    this.runOpen = true;
    this.runMessages = [];
    this.turnAssistant = null;
    this.turnToolResults = [];
    await this.emit({ type: "agent_start" });
    await this.emit({ type: "turn_start" });
  }

  /** Each assistant message is a turn: close the previous one first. */
  private async nextTurn(): Promise<void> {
    await this.openRun();
    if (this.turnAssistant) {
      await this.emit({ type: "turn_end", message: this.turnAssistant, toolResults: this.turnToolResults });
      await this.emit({ type: "turn_start" });
      this.turnAssistant = null;
      this.turnToolResults = [];
    }
  }

  private async closeRun(): Promise<void> {
    if (!this.runOpen) return;
    if (this.turnAssistant) await this.emit({ type: "turn_end", message: this.turnAssistant, toolResults: this.turnToolResults });
    await this.emit({ type: "agent_end", messages: this.runMessages });
    this.runOpen = false;
    this.turnAssistant = null;
    this.turnToolResults = [];
  }

  private base(stopReason: string): Json {
    return { role: "assistant", content: [], api: API, provider: this.provider, model: this.model, usage: ZERO_USAGE(), stopReason, timestamp: Date.now() };
  }

  private async update(partial: Json, event: Json): Promise<void> {
    const snapshot = clone(partial);
    await this.emit({ type: "message_update", assistantMessageEvent: { ...event, partial: snapshot }, message: snapshot });
  }

  /** A streamed assistant message: starts and deltas in block order, then every *_end, then message_end. */
  private async assistant(blocks: Block[], stopReason: "stop" | "toolUse", usage?: Usage, chunkDelayMs?: number): Promise<Json> {
    await this.nextTurn();
    this.responses += 1;
    const partial = this.base("stop");
    await this.emit({ type: "message_start", message: clone(partial) });
    partial.responseId = `chatcmpl-fake-${this.responses}`;
    const content: Json[] = [];
    partial.content = content;
    for (const [ci, block] of blocks.entries()) {
      if (block.type === "toolCall") {
        const json = JSON.stringify(block.arguments);
        const live: Json = { type: "toolCall", id: block.id, name: block.name, arguments: {}, partialArgs: "", streamIndex: ci };
        content.push(live);
        await this.update(partial, { type: "toolcall_start", contentIndex: ci });
        for (const delta of pieces(json)) {
          live.partialArgs = `${String(live.partialArgs)}${delta}`;
          try {
            live.arguments = JSON.parse(String(live.partialArgs));
          } catch {
            // still partial
          }
          await this.update(partial, { type: "toolcall_delta", contentIndex: ci, delta });
        }
      } else {
        const key = block.type === "text" ? "text" : "thinking";
        const live: Json = { type: block.type, [key]: "" };
        content.push(live);
        await this.update(partial, { type: `${block.type}_start`, contentIndex: ci });
        for (const [n, delta] of pieces(String(block[key])).entries()) {
          // A slow reply: an abort between two deltas ends the message "aborted", its partial text kept (d1).
          if (n > 0 && chunkDelayMs && (await this.pause(chunkDelayMs))) return this.abortedMidStream(partial, content);
          live[key] = `${String(live[key])}${delta}`;
          await this.update(partial, { type: `${block.type}_delta`, contentIndex: ci, delta });
        }
      }
    }
    partial.usage = usageOf(usage ?? this.scenario.usage);
    partial.stopReason = stopReason;
    for (const [ci, block] of blocks.entries()) {
      content[ci] = clone(block);
      if (block.type === "toolCall") await this.update(partial, { type: "toolcall_end", contentIndex: ci, toolCall: clone(block) });
      else await this.update(partial, { type: `${block.type}_end`, contentIndex: ci, content: block.type === "text" ? block.text : block.thinking });
    }
    const message = clone(partial);
    await this.emit({ type: "message_end", message });
    this.runMessages.push(message);
    this.turnAssistant = message;
    if (this.retryAttempt > 0) {
      await this.emit({ type: "auto_retry_end", success: true, attempt: this.retryAttempt });
      this.retryAttempt = 0;
    }
    return message;
  }

  /** The abort of a streaming reply: every started block ends, then message_end "aborted" with the partial content, turn_end, agent_end. */
  private async abortedMidStream(partial: Json, content: Json[]): Promise<Json> {
    for (const [ci, block] of content.entries()) {
      if (block.type === "toolCall") await this.update(partial, { type: "toolcall_end", contentIndex: ci, toolCall: clone(block) });
      else await this.update(partial, { type: `${String(block.type)}_end`, contentIndex: ci, content: block.type === "text" ? block.text : block.thinking });
    }
    return this.endAborted(partial);
  }

  /** A failed model call: message_start/end with no updates, the run ends, then pi's auto-retry decides. */
  private async failedAttempt(errorMessage: string): Promise<void> {
    await this.nextTurn();
    const message = { ...this.base("error"), errorMessage };
    await this.emit({ type: "message_start", message });
    await this.emit({ type: "message_end", message });
    this.runMessages.push(message);
    this.turnAssistant = message;
    await this.closeRun();
    const retry = this.ctx.retry;
    if (!RETRYABLE.test(errorMessage) || !retry.enabled) {
      this.failed = true;
      return;
    }
    this.retryAttempt += 1;
    if (this.retryAttempt > retry.maxRetries) {
      await this.emit({ type: "auto_retry_end", success: false, attempt: this.retryAttempt - 1, finalError: errorMessage });
      this.retryAttempt = 0;
      this.failed = true;
      return;
    }
    await this.emit({
      type: "auto_retry_start",
      attempt: this.retryAttempt,
      maxAttempts: retry.maxRetries,
      delayMs: retry.baseDelayMs * 2 ** (this.retryAttempt - 1),
      errorMessage,
    });
    this.lastMessage = null;
    if (await this.pause(this.scenario.retrySleepMs)) {
      // pi's abortRetry: the delay is cut, the retry ends as cancelled.
      await this.emit({ type: "auto_retry_end", success: false, attempt: this.retryAttempt, finalError: "Retry cancelled" });
      this.retryAttempt = 0;
      this.failed = true;
    }
  }

  private async aborted(text: string): Promise<void> {
    await this.nextTurn();
    this.responses += 1;
    const partial = this.base("stop");
    await this.emit({ type: "message_start", message: clone(partial) });
    if (text) {
      partial.responseId = `chatcmpl-fake-${this.responses}`;
      const live = { type: "text", text: "" };
      partial.content = [live];
      await this.update(partial, { type: "text_start", contentIndex: 0 });
      live.text = text;
      await this.update(partial, { type: "text_delta", contentIndex: 0, delta: text });
      await this.update(partial, { type: "text_end", contentIndex: 0, content: text });
    }
    await this.endAborted(partial);
  }

  /** An aborted reply ends: message_end "aborted" with what streamed so far, then the run (turn_end, agent_end). */
  private async endAborted(partial: Json): Promise<Json> {
    const message = { ...clone(partial), stopReason: "aborted", errorMessage: "Request was aborted" };
    await this.emit({ type: "message_end", message });
    this.runMessages.push(message);
    this.turnAssistant = message;
    await this.closeRun();
    this.failed = true;
    return message;
  }

  private toolEnabled(name: string): boolean {
    return this.ctx.enabledTools.has(name);
  }

  /**
   * One batch of tool calls, as pi runs them in parallel: every start first (an
   * unknown tool ends at once), bash's updates, then the ends of the tools that
   * ran, last call first; then the toolResult messages in call order.
   */
  private async executeTools(calls: Call[]): Promise<void> {
    const outcomes = new Map<Call, { result: Json; isError: boolean }>();
    const ran: Call[] = [];
    for (const call of calls) {
      const id = call.block.id;
      await this.emit({ type: "tool_execution_start", toolCallId: id, toolName: call.name, args: call.args });
      let immediate: { result: Json; isError: boolean } | undefined;
      // The extension's tool_call hook: a dialog in RPC (blocks until answered, abort does not release it); refused at once without UI.
      const confirmed = call.confirm === undefined || (this.ctx.ui !== undefined && (await this.ctx.ui.confirm(call.confirm.title, call.confirm.message, call.confirm.timeout)));
      if (!confirmed && call.confirm) immediate = { result: { content: [{ type: "text", text: call.confirm.reason }], details: {} }, isError: true };
      else if (!this.toolEnabled(call.name)) immediate = { result: { content: [{ type: "text", text: `Tool ${call.name} not found` }], details: {} }, isError: true };
      else if (call.envelope?.invalid) {
        const text =
          call.envelope.error ??
          `Validation failed for tool "${REPORT_TOOL}":\n  - status: must be equal to one of the allowed values\n\nReceived arguments:\n${JSON.stringify(call.args, null, 2)}`;
        immediate = { result: { content: [{ type: "text", text }], details: {} }, isError: true };
      }
      if (immediate) {
        outcomes.set(call, immediate);
        await this.emit({ type: "tool_execution_end", toolCallId: id, toolName: call.name, result: immediate.result, isError: immediate.isError });
      } else ran.push(call);
    }
    for (const call of ran) {
      // Confirmed after an abort: the tool still starts, and is cut at once (§5).
      const cut = call.confirm !== undefined && this.abortRequested();
      let refused: string | null = null;
      if (call.write && !cut) {
        const path = resolve(process.cwd(), call.write.path);
        try {
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, call.write.content);
        } catch (error) {
          // As pi's write tool: the error is the tool's result (a read-only file system, a sandbox).
          refused = (error as Error).message;
        }
      }
      const text = refused ?? (cut ? `${call.result}\n\nCommand aborted` : call.result);
      const result: Json = { content: [{ type: "text", text }] };
      if (call.details !== undefined) result.details = call.details;
      outcomes.set(call, { result, isError: call.isError || cut || refused !== null });
      if (call.name === "bash") {
        const base = { type: "tool_execution_update", toolCallId: call.block.id, toolName: call.name, args: call.args };
        await this.emit({ ...base, partialResult: { content: [] } });
        await this.emit({ ...base, partialResult: { content: [{ type: "text", text: call.result }], details: {} } });
      }
    }
    for (const call of [...ran].reverse()) {
      const outcome = outcomes.get(call);
      if (outcome) await this.emit({ type: "tool_execution_end", toolCallId: call.block.id, toolName: call.name, result: outcome.result, isError: outcome.isError });
    }
    for (const call of calls) {
      const outcome = outcomes.get(call);
      if (!outcome) continue;
      const message: Json = { role: "toolResult", toolCallId: call.block.id, toolName: call.name, content: outcome.result.content };
      if (outcome.result.details !== undefined) message.details = outcome.result.details;
      message.isError = outcome.isError;
      message.timestamp = Date.now();
      await this.emit({ type: "message_start", message });
      await this.emit({ type: "message_end", message });
      this.runMessages.push(message);
      this.turnToolResults.push(message);
    }
  }

  /** A read of a huge file: its tool_execution_end line is `bytes` long, written in 1 MiB pieces. */
  private async oversize(bytes: number): Promise<void> {
    this.calls += 1;
    const id = `call_read_${this.calls}`;
    const args = { path: "big.txt" };
    await this.assistant([{ type: "toolCall", id, name: "read", arguments: args }], "toolUse");
    await this.emit({ type: "tool_execution_start", toolCallId: id, toolName: "read", args });
    if (this.ctx.json) {
      const head = `{"type":"tool_execution_end","toolCallId":"${id}","toolName":"read","result":{"content":[{"type":"text","text":"`;
      await writeHugeLine(bytes, head, `"}]},"isError":false}\n`);
    }
    const message = { role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: "(oversize)" }], isError: false, timestamp: Date.now() };
    await this.emit({ type: "message_start", message });
    await this.emit({ type: "message_end", message });
    this.runMessages.push(message);
    this.turnToolResults.push(message);
  }

  /** Text mode (`-p` without --mode json): the last assistant message's text, or its error on stderr and exit 1. */
  textModeResult(): number {
    const last = this.lastMessage;
    if (last?.role !== "assistant") return 0;
    if (last.stopReason === "error" || last.stopReason === "aborted") {
      process.stderr.write(`${String(last.errorMessage || `Request ${String(last.stopReason)}`)}\n`);
      return 1;
    }
    let out = "";
    for (const block of last.content as Json[]) if (block.type === "text") out += `${String(block.text)}\n`;
    if (out) process.stdout.write(out);
    return 0;
  }
}

// ---------------------------------------------------------------- main

let stdinCache: string | undefined;
async function stdinText(): Promise<string> {
  if (process.stdin.isTTY) return "";
  stdinCache ??= await Bun.stdin.text();
  return stdinCache;
}

function resolveSessionPath(arg: string, cwd: string, sessionDir: string | undefined): { type: "path" | "local"; path: string } | { type: "global"; path: string; cwd: string } | { type: "not_found" } {
  if (arg.includes("/") || arg.includes("\\") || arg.endsWith(".jsonl")) return { type: "path", path: arg };
  const local = listSessions(sessionDir ?? defaultSessionDir(cwd)).find((s) => s.id.startsWith(arg));
  if (local) return { type: "local", path: local.path };
  const global = listAllSessions().find((s) => s.id.startsWith(arg));
  if (global) return { type: "global", path: global.path, cwd: global.cwd };
  return { type: "not_found" };
}

/** pi's createSessionManager, and the 0.85 `--session-id`. */
async function chooseSession(args: PiArgs, dialect: PiDialect, cwd: string, sessionDir: string | undefined): Promise<SessionStore> {
  if (args.noSession) return SessionStore.inMemory(cwd, dialect === "0.85" ? args.sessionId : undefined);
  if (args.fork) {
    const found = resolveSessionPath(args.fork, cwd, sessionDir);
    if (found.type === "not_found") throw new PiFailure(`No session found matching '${args.fork}'`);
    return SessionStore.fork(found.path, cwd, sessionDir);
  }
  if (args.session) {
    if (args.sessionId !== undefined) throw new PiFailure("Error: --session-id cannot be combined with --session");
    const found = resolveSessionPath(args.session, cwd, sessionDir);
    if (found.type === "not_found") throw new PiFailure(`No session found matching '${args.session}'`);
    if (found.type !== "global") return SessionStore.open(found.path, sessionDir);
    // Found in another project's folder of the default tree: pi asks on stdin.
    process.stderr.write(`Session found in different project: ${found.cwd}\nFork this session into current directory? [y/N] `);
    const text = await stdinText();
    if (text === "") throw new Exit(0); // EOF: pi exits 0 silently, the prompt never runs
    const newline = text.indexOf("\n");
    const answer = (newline === -1 ? text : text.slice(0, newline)).trim().toLowerCase();
    stdinCache = newline === -1 ? "" : text.slice(newline + 1);
    if (answer !== "y" && answer !== "yes") {
      process.stderr.write("Aborted.\n");
      throw new Exit(0);
    }
    return SessionStore.fork(found.path, cwd, sessionDir);
  }
  if (dialect === "0.85" && args.sessionId !== undefined) {
    // The seed's pi: the id names the session; one with that id *and this cwd* in the session dir is continued.
    const dir = sessionDir ?? defaultSessionDir(cwd);
    const match = listSessions(dir).find((s) => s.id === args.sessionId && s.cwd === cwd);
    if (match) return SessionStore.open(match.path, dir, cwd);
    process.stderr.write(`Warning: no session ${args.sessionId} for this folder in ${dir}; creating it\n`);
    return SessionStore.create(cwd, dir, args.sessionId);
  }
  if (args.resume) {
    process.stderr.write("No session selected\n");
    throw new Exit(0);
  }
  if (args.continue) {
    const dir = sessionDir ?? defaultSessionDir(cwd);
    const recent = listSessions(dir)[0];
    return recent ? SessionStore.open(recent.path, dir, cwd) : SessionStore.create(cwd, dir);
  }
  return SessionStore.create(cwd, sessionDir ?? defaultSessionDir(cwd));
}

function enabledTools(args: PiArgs): Set<string> {
  const extensionTools = args.extensions.length > 0 ? [REPORT_TOOL] : [];
  const available = [...BUILTIN_TOOLS, ...extensionTools];
  if (args.noTools) return new Set();
  if (args.tools) return new Set(args.tools.filter((t) => available.includes(t)));
  if (args.noBuiltinTools) return new Set(extensionTools);
  return new Set([...DEFAULT_TOOLS, ...extensionTools]);
}

function resolveModel(args: PiArgs): { provider: string; model: string; thinking?: string } {
  let provider = args.provider;
  let model = args.model;
  let thinking: string | undefined;
  if (model) {
    const colon = model.lastIndexOf(":");
    if (colon > 0 && THINKING_LEVELS.includes(model.slice(colon + 1))) {
      thinking = model.slice(colon + 1);
      model = model.slice(0, colon);
    }
    const slash = model.indexOf("/");
    if (!provider && slash > 0) {
      provider = model.slice(0, slash);
      model = model.slice(slash + 1);
    }
  }
  return { provider: provider ?? "standin", model: model ?? "standin-model", thinking };
}

export async function fakePi(argv: string[], scenarioSpec: string | undefined): Promise<number> {
  const dialect = piDialect();
  const scenario = await resolveScenario(scenarioSpec ?? "text", BUILTIN_SCENARIOS, ScenarioSchema);
  logInvocation("fake-pi", argv);
  try {
    return await runPi(parsePiArgs(withoutScenarioFlag(argv), dialect), dialect, scenario);
  } catch (error) {
    if (error instanceof Exit) return error.code;
    if (error instanceof PiFailure) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

async function runPi(args: PiArgs, dialect: PiDialect, scenario: Scenario): Promise<number> {
  const version = VERSION[dialect];
  // 1. Argument diagnostics: an unknown short option (or a prompt starting with "-") ends it here.
  for (const d of args.diagnostics) process.stderr.write(`${d.type === "error" ? "Error" : "Warning"}: ${d.message}\n`);
  if (args.diagnostics.some((d) => d.type === "error")) return 1;
  // Outside interactive mode pi moves console output to stderr: --version and --help land there.
  const interactive = args.mode !== "json" && args.mode !== "rpc" && !args.print && process.stdin.isTTY === true;
  const say = (text: string) => (interactive ? process.stdout : process.stderr).write(text);
  if (args.version) {
    say(`${version}\n`);
    return 0;
  }
  if (args.export) {
    process.stderr.write("fake-pi: --export is not implemented by the fake pi\n");
    return 2;
  }
  if (args.fork) {
    const conflicts = [args.session && "--session", args.continue && "--continue", args.resume && "--resume", args.noSession && "--no-session"].filter(Boolean);
    if (conflicts.length > 0) throw new PiFailure(`Error: --fork cannot be combined with ${conflicts.join(", ")}`);
  }

  // 2. The session, which decides the cwd pi runs in.
  const startCwd = process.cwd();
  const settings = loadSettings(startCwd);
  const envSessionDir = process.env.PI_CODING_AGENT_SESSION_DIR;
  const settingsSessionDir = typeof settings.sessionDir === "string" ? expandTilde(settings.sessionDir) : undefined;
  const sessionDir = args.sessionDir ?? (envSessionDir ? expandTilde(envSessionDir) : undefined) ?? settingsSessionDir;
  const session = await chooseSession(args, dialect, startCwd, sessionDir);
  if (session.file && !existsSync(session.cwd)) {
    throw new PiFailure(`Stored session working directory does not exist: ${session.cwd}\nSession file: ${session.file}\nCurrent working directory: ${startCwd}`);
  }
  if (session.cwd !== startCwd) process.chdir(session.cwd);

  // 3. Extensions load: the inventory our own extension would write.
  const extensionPaths = args.extensions.map((p) => resolve(startCwd, p));
  const inventory = { pi_version: version, extensions: extensionPaths.map((p) => basename(p).replace(/\.ts$/, "")) };
  const inventoryFile = process.env.AGENTPORT_INVENTORY_FILE;
  const extensionsLoad = extensionPaths.length > 0 && extensionPaths.every((p) => existsSync(p));
  if (extensionsLoad && inventoryFile) writeFileSync(inventoryFile, `${JSON.stringify(inventory)}\n`);

  if (args.help) {
    say(helpText(dialect));
    return 0;
  }
  const { provider, model, thinking: modelThinking } = resolveModel(args);
  if (args.listModels !== undefined) {
    say(`provider  model  context  max-out  thinking  images\n${provider}  ${model}  100K  4.1K  no  no\n`);
    return 0;
  }

  // 4. stdin, read to EOF before anything else runs (left open, pi hangs here). RPC reads commands from it instead.
  const rpc = args.mode === "rpc";
  const piped = rpc ? "" : (await stdinText()).trim();

  // @file arguments, as text (pi's processFileArguments; images are not told apart here).
  let fileText = "";
  for (const fileArg of args.fileArgs) {
    const path = resolve(process.cwd(), expandTilde(fileArg));
    if (!existsSync(path)) throw new PiFailure(`Error: File not found: ${path}`);
    const content = readFileSync(path, "utf8");
    if (content.length > 0) fileText += `<file name="${path}">\n${content}\n</file>\n`;
  }

  // 5. Runtime diagnostics: unknown long options (no extension claimed them), extensions that do not load.
  const runtimeErrors: string[] = [];
  const unknown = [...args.unknownFlags.keys()];
  if (unknown.length > 0) runtimeErrors.push(`Unknown option${unknown.length === 1 ? "" : "s"}: ${unknown.map((n) => `--${n}`).join(", ")}`);
  for (const path of extensionPaths) if (!existsSync(path)) runtimeErrors.push(`Failed to load extension "${path}": file not found`);
  for (const message of runtimeErrors) process.stderr.write(`Error: ${message}\n`);
  if (runtimeErrors.length > 0) return 1;
  if (interactive) {
    // pi's terminal UI, as far as a test needs it: where it runs and on which session.
    process.stdout.write(`fake-pi interactive: cwd=${process.cwd()} session=${session.id} file=${session.file ?? "-"}\n`);
    return 0;
  }

  // 6. Print mode (or RPC).
  const json = args.mode === "json" || rpc;
  const thinkingLevel = args.thinking ?? modelThinking ?? "off";
  if (!session.hasMessages) {
    session.append({ type: "model_change", provider, modelId: model });
    session.append({ type: "thinking_level_change", thinkingLevel });
  } else if (!session.hasThinkingEntry) {
    session.append({ type: "thinking_level_change", thinkingLevel });
  }
  const retrySettings = (settings.retry ?? {}) as Json;
  const runCtx: RunContext = {
    json,
    session,
    provider,
    model,
    enabledTools: enabledTools(args),
    retry: {
      enabled: retrySettings.enabled !== false,
      maxRetries: typeof retrySettings.maxRetries === "number" ? retrySettings.maxRetries : 3,
      baseDelayMs: typeof retrySettings.baseDelayMs === "number" ? retrySettings.baseDelayMs : 2000,
    },
  };
  // A continued session plays the scenario's `resumed` steps, when it has them (a nudge, a resume).
  const played = !rpc && session.hasMessages && scenario.resumed !== undefined ? { ...scenario, steps: scenario.resumed } : scenario;
  const run = new PiRun(played, runCtx);
  process.on("SIGTERM", () => process.exit(143));
  process.on("SIGHUP", () => process.exit(129));
  if (rpc) return await runRpc({ dialect, scenario, run, ctx: runCtx, thinkingLevel, extensionPaths, inventory, startProvider: provider, startModel: model });

  if (json) await writeOut(`${JSON.stringify(session.header)}\n`);
  const messages = [...args.messages];
  const first = [piped || undefined, fileText || undefined, messages.shift()].filter((p): p is string => p !== undefined);
  const prompts = scenario.ignorePrompt ? [] : [...(first.length > 0 ? [first.join("")] : []), ...messages];
  if (prompts.length > 0 && dialect === "0.85" && extensionPaths.length > 0) {
    const entry = session.append({ type: "custom", customType: INVENTORY_TYPE, data: inventory });
    if (json) await writeOut(`${JSON.stringify({ type: "entry_appended", entry })}\n`);
  }
  for (const prompt of prompts) {
    const code = await run.prompt(prompt);
    if (code !== undefined) return code;
  }
  const after = await run.afterRun(played.after);
  if (after !== undefined) return after;
  return json ? 0 : run.textModeResult();
}

// ---------------------------------------------------------------- help

function helpText(dialect: PiDialect): string {
  if (dialect === "0.73.1") return HELP;
  return HELP.replace(
    "  --fork <path|id>",
    "  --session-id <uuid>            Use the session with this id in the session dir, or create it\n  --fork <path|id>",
  ).replace(
    "  --help, -h",
    "  --approve                      Trust project resources (.pi/) without asking\n  --                             End of options: every later argument is a message\n  --help, -h",
  );
}

/** pi 0.73.1's --help, as captured (fixtures/pi/h2-help.stderr.txt). */
const HELP = `pi - AI coding assistant with read, bash, edit, write tools

Usage:
  pi [options] [@files...] [messages...]

Commands:
  pi install <source> [-l]     Install extension source and add to settings
  pi remove <source> [-l]      Remove extension source from settings
  pi uninstall <source> [-l]   Alias for remove
  pi update [source|self|pi]   Update pi and installed extensions
  pi list                      List installed extensions from settings
  pi config                    Open TUI to enable/disable package resources
  pi <command> --help          Show help for install/remove/uninstall/update/list

Options:
  --provider <name>              Provider name (default: google)
  --model <pattern>              Model pattern or ID (supports "provider/id" and optional ":<thinking>")
  --api-key <key>                API key (defaults to env vars)
  --system-prompt <text>         System prompt (default: coding assistant prompt)
  --append-system-prompt <text>  Append text or file contents to the system prompt (can be used multiple times)
  --mode <mode>                  Output mode: text (default), json, or rpc
  --print, -p                    Non-interactive mode: process prompt and exit
  --continue, -c                 Continue previous session
  --resume, -r                   Select a session to resume
  --session <path|id>            Use specific session file or partial UUID
  --fork <path|id>               Fork specific session file or partial UUID into a new session
  --session-dir <dir>            Directory for session storage and lookup
  --no-session                   Don't save session (ephemeral)
  --models <patterns>            Comma-separated model patterns for Ctrl+P cycling
                                 Supports globs (anthropic/*, *sonnet*) and fuzzy matching
  --no-tools, -nt                Disable all tools by default (built-in and extension)
  --no-builtin-tools, -nbt       Disable built-in tools by default but keep extension/custom tools enabled
  --tools, -t <tools>            Comma-separated allowlist of tool names to enable
                                 Applies to built-in, extension, and custom tools
  --thinking <level>             Set thinking level: off, minimal, low, medium, high, xhigh
  --extension, -e <path>         Load an extension file (can be used multiple times)
  --no-extensions, -ne           Disable extension discovery (explicit -e paths still work)
  --skill <path>                 Load a skill file or directory (can be used multiple times)
  --no-skills, -ns               Disable skills discovery and loading
  --prompt-template <path>       Load a prompt template file or directory (can be used multiple times)
  --no-prompt-templates, -np     Disable prompt template discovery and loading
  --theme <path>                 Load a theme file or directory (can be used multiple times)
  --no-themes                    Disable theme discovery and loading
  --no-context-files, -nc        Disable AGENTS.md and CLAUDE.md discovery and loading
  --export <file>                Export session file to HTML and exit
  --list-models [search]         List available models (with optional fuzzy search)
  --verbose                      Force verbose startup (overrides quietStartup setting)
  --offline                      Disable startup network operations (same as PI_OFFLINE=1)
  --help, -h                     Show this help
  --version, -v                  Show version number

Extensions can register additional flags (e.g., --plan from plan-mode extension).

Examples:
  # Interactive mode
  pi

  # Interactive mode with initial prompt
  pi "List all .ts files in src/"

  # Include files in initial message
  pi @prompt.md @image.png "What color is the sky?"

  # Non-interactive mode (process and exit)
  pi -p "List all .ts files in src/"

  # Multiple messages (interactive)
  pi "Read package.json" "What dependencies do we have?"

  # Continue previous session
  pi --continue "What did we discuss?"

  # Use different model
  pi --provider openai --model gpt-4o-mini "Help me refactor this code"

  # Use model with provider prefix (no --provider needed)
  pi --model openai/gpt-4o "Help me refactor this code"

  # Use model with thinking level shorthand
  pi --model sonnet:high "Solve this complex problem"

  # Limit model cycling to specific models
  pi --models claude-sonnet,claude-haiku,gpt-4o

  # Limit to a specific provider with glob pattern
  pi --models "github-copilot/*"

  # Cycle models with fixed thinking levels
  pi --models sonnet:high,haiku:low

  # Start with a specific thinking level
  pi --thinking high "Solve this complex problem"

  # Read-only mode (no file modifications possible)
  pi --tools read,grep,find,ls -p "Review the code in src/"

  # Export a session file to HTML
  pi --export ~/.pi/agent/sessions/--path--/session.jsonl
  pi --export session.jsonl output.html

Environment Variables:
  ANTHROPIC_API_KEY                - Anthropic Claude API key
  ANTHROPIC_OAUTH_TOKEN            - Anthropic OAuth token (alternative to API key)
  OPENAI_API_KEY                   - OpenAI GPT API key
  AZURE_OPENAI_API_KEY             - Azure OpenAI API key
  AZURE_OPENAI_BASE_URL            - Azure OpenAI/Cognitive Services base URL (e.g. https://{resource}.openai.azure.com)
  AZURE_OPENAI_RESOURCE_NAME       - Azure OpenAI resource name (alternative to base URL)
  AZURE_OPENAI_API_VERSION         - Azure OpenAI API version (default: v1)
  AZURE_OPENAI_DEPLOYMENT_NAME_MAP - Azure OpenAI model=deployment map (comma-separated)
  DEEPSEEK_API_KEY                 - DeepSeek API key
  GEMINI_API_KEY                   - Google Gemini API key
  GROQ_API_KEY                     - Groq API key
  CEREBRAS_API_KEY                 - Cerebras API key
  XAI_API_KEY                      - xAI Grok API key
  FIREWORKS_API_KEY                - Fireworks API key
  OPENROUTER_API_KEY               - OpenRouter API key
  AI_GATEWAY_API_KEY               - Vercel AI Gateway API key
  ZAI_API_KEY                      - ZAI API key
  MISTRAL_API_KEY                  - Mistral API key
  MINIMAX_API_KEY                  - MiniMax API key
  MOONSHOT_API_KEY                 - Moonshot AI API key
  OPENCODE_API_KEY                 - OpenCode Zen/OpenCode Go API key
  KIMI_API_KEY                     - Kimi For Coding API key
  CLOUDFLARE_API_KEY               - Cloudflare API token (Workers AI and AI Gateway)
  CLOUDFLARE_ACCOUNT_ID            - Cloudflare account id (required for both)
  CLOUDFLARE_GATEWAY_ID            - Cloudflare AI Gateway slug (required for AI Gateway)
  XIAOMI_API_KEY                   - Xiaomi MiMo API key (api.xiaomimimo.com billing)
  XIAOMI_TOKEN_PLAN_CN_API_KEY     - Xiaomi MiMo Token Plan API key (China region)
  XIAOMI_TOKEN_PLAN_AMS_API_KEY    - Xiaomi MiMo Token Plan API key (Amsterdam region)
  XIAOMI_TOKEN_PLAN_SGP_API_KEY    - Xiaomi MiMo Token Plan API key (Singapore region)
  AWS_PROFILE                      - AWS profile for Amazon Bedrock
  AWS_ACCESS_KEY_ID                - AWS access key for Amazon Bedrock
  AWS_SECRET_ACCESS_KEY            - AWS secret key for Amazon Bedrock
  AWS_BEARER_TOKEN_BEDROCK         - Bedrock API key (bearer token)
  AWS_REGION                       - AWS region for Amazon Bedrock (e.g., us-east-1)
  PI_CODING_AGENT_DIR              - Config directory (default: ~/.pi/agent)
  PI_CODING_AGENT_SESSION_DIR      - Session storage directory (overridden by --session-dir)
  PI_PACKAGE_DIR                   - Override package directory (for Nix/Guix store paths)
  PI_OFFLINE                       - Disable startup network operations when set to 1/true/yes
  PI_TELEMETRY                     - Override install telemetry when set to 1/true/yes or 0/false/no
  PI_SHARE_VIEWER_URL              - Base URL for /share command (default: https://pi.dev/session/)

Built-in Tool Names:
  read   - Read file contents
  bash   - Execute bash commands
  edit   - Edit files with find/replace
  write  - Write files (creates/overwrites)
  grep   - Search file contents (read-only, off by default)
  find   - Find files by glob pattern (read-only, off by default)
  ls     - List directory contents (read-only, off by default)

`;
