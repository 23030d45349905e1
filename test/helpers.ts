// Shared by the tests: feed a reducer lines as the framer would, and run the compiled binary.
import { join } from "node:path";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, symlinkSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { spawnCollect } from "./standins/util.ts";
import { LineFramer } from "../src/core/frame.ts";
import { ClaudeReducer } from "../src/core/claude/reducer.ts";
import type { ProgressEvent } from "../src/core/progress.ts";
import type { LoopObserver } from "../src/core/loop.ts";
import type { AgentName } from "../src/core/agents.ts";

export const ROOT = join(import.meta.dir, "..");
export const BIN = process.env.AGENTPORT_BIN ?? join(ROOT, "dist", "agentport");

/** An event without the running totals every reducer stamps on it (test/running-totals.test.ts checks those). */
export function bare(event: ProgressEvent): ProgressEvent {
  const { tokens: _tokens, cost_micro_usd: _cost, ...rest } = event;
  return rest;
}

export function reduceClaude(text: string, options: { cwd?: string; loop?: LoopObserver; max?: number } = {}) {
  const events: ProgressEvent[] = [];
  const sent: ProgressEvent[] = [];
  const reducer = new ClaudeReducer({ cwd: options.cwd, emit: (e) => void (sent.push(e), events.push(bare(e))), loop: options.loop });
  const framer = new LineFramer(reducer, options.max);
  framer.push(new TextEncoder().encode(text));
  framer.end();
  reducer.streamEnded();
  return { reduction: reducer.reduction(), events, sent, reducer };
}

export const lines = (...records: unknown[]): string =>
  records.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n") + "\n";

export function tempDir(prefix = "agentport-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A fresh folder with the fake claude in it (a link to the binary named fake-claude). */
export function fakeClaudeDir(prefix: string): { dir: string; claude: string } {
  const dir = tempDir(prefix);
  const claude = join(dir, "fake-claude");
  symlinkSync(BIN, claude);
  return { dir, claude };
}

/** The host pids of live `sleep MARKER` processes (not the shell that started one; a pid written in a sandbox is its namespace's). */
export function sleepsWithMarker(marker: string): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/cmdline`, "latin1") === `sleep\0${marker}\0`;
      } catch {
        return false;
      }
    })
    .map(Number);
}

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Run the compiled agentport with `args`, in `cwd`, with the test's environment plus `env`: the one
 * runner (spawnCollect) with its fields as most tests read them. A signal's death is 128 + its number,
 * as a shell reports it; a call still running after 85 s (under the suite's 90 s test bound) is killed,
 * so its output is seen rather than a bare test timeout.
 */
export async function agentport(args: string[], opts: { cwd?: string; env?: Record<string, string>; stdin?: string } = {}): Promise<Ran> {
  const ran = await spawnCollect([BIN, ...args], {
    cwd: opts.cwd ?? ROOT,
    env: { ...(process.env as Record<string, string>), NO_COLOR: "1", ...opts.env },
    stdin: opts.stdin,
    timeoutMs: 85_000,
  });
  const signal = ran.signal === null ? 0 : (constants.signals[ran.signal as keyof typeof constants.signals] ?? 0);
  return { code: ran.code ?? 128 + signal, stdout: ran.stdout, stderr: ran.stderr };
}

import { PiReducer, type PiReducerOptions } from "../src/core/pi/reducer.ts";

export function reducePi(text: string, options: PiReducerOptions & { max?: number } = {}) {
  const events: ProgressEvent[] = [];
  const sent: ProgressEvent[] = [];
  const reducer = new PiReducer({ ...options, emit: (e) => void (sent.push(e), events.push(bare(e))) });
  const framer = new LineFramer(reducer, options.max);
  framer.push(new TextEncoder().encode(text));
  framer.end();
  reducer.streamEnded();
  return { reading: reducer.reduction(), events, sent };
}

export interface FakeProject {
  root: string;
  /** A repository root (it has .git), so the config search stops there. */
  proj: string;
  /** Every fake call appends one JSON line here ($AGENTPORT_FAKE_LOG). */
  log: string;
  /** Private homes, both fakes as the agents, no project config from outside. */
  env: Record<string, string>;
}

/** A project folder under a fresh temp root, with the fake agents installed as its agents. */
export function fakeProject(prefix: string, env: Record<string, string> = {}): FakeProject {
  const root = realpathSync(tempDir(prefix));
  const proj = join(root, "proj");
  const bin = join(root, "bin");
  for (const d of [proj, join(proj, ".git"), bin, join(root, "home"), join(root, "pi-agent")]) mkdirSync(d, { recursive: true });
  for (const fake of ["fake-pi", "fake-claude", "fake-codex", "fake-gemini", "fake-opencode", "fake-acp"])
    symlinkSync(BIN, join(bin, fake));
  const log = join(root, "fake.log");
  return {
    root,
    proj,
    log,
    env: {
      HOME: join(root, "home"),
      PI_CODING_AGENT_DIR: join(root, "pi-agent"),
      AGENTPORT_HOME: join(root, "state"),
      AGENTPORT_PI_BIN: join(bin, "fake-pi"),
      AGENTPORT_CLAUDE_BIN: join(bin, "fake-claude"),
      AGENTPORT_CODEX_BIN: join(bin, "fake-codex"),
      AGENTPORT_GEMINI_BIN: join(bin, "fake-gemini"),
      AGENTPORT_OPENCODE_BIN: join(bin, "fake-opencode"),
      AGENTPORT_FAKE_LOG: log,
      AGENTPORT_CONFIG: "",
      // The fakes on PATH: `--acp-command fake-acp` (AGENT_FLAGS) finds the fake ACP agent there.
      PATH: `${bin}:${process.env.PATH ?? ""}`,
      ...env,
    },
  };
}

/** One run of a fake agent as its log has it (not its --help / --version probes). */
export interface FakeRun {
  fake: string;
  argv: string[];
  max_thinking_tokens: string | null;
}

/** The fake agents' runs in this project, oldest first. */
/** What a run of each agent needs besides its settings: acp names its ACP agent (the fake, on the project's PATH). */
export const AGENT_FLAGS: Readonly<Record<AgentName, readonly string[]>> = {
  claude: [],
  pi: [],
  codex: [],
  gemini: [],
  opencode: [],
  acp: ["--acp-command", "fake-acp"],
};

export function fakeRuns(p: FakeProject): FakeRun[] {
  if (!existsSync(p.log)) return [];
  return (
    readFileSync(p.log, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as FakeRun)
      // fake-acp also logs each message it receives (no argv): only invocations are runs.
      .filter((r) => Array.isArray(r.argv) && !r.argv.includes("--help") && !r.argv.includes("--version"))
  );
}

/** Whether `words` stand in `argv` in this order, side by side (a word ending in "/" or "=" is a prefix). */
export const hasWords = (argv: readonly string[], words: readonly string[]): boolean =>
  argv.some((_, i) => words.every((w, j) => (w.endsWith("/") || w.endsWith("=") ? (argv[i + j] ?? "").startsWith(w) : argv[i + j] === w)));
