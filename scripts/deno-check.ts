/**
 * deno-check.ts — proof that src/core is runtime-neutral: the captured
 * fixtures replayed through the core's framer, reducers and judge give the
 * same verdicts under Deno as under Bun.
 *
 * Run:
 *   bun run scripts/deno-check.ts            replay under Bun, then the same file under Deno
 *                                            (node_modules/.bin/deno, else deno on PATH), and diff
 *   deno run --allow-read [--allow-write] scripts/deno-check.ts [--out FILE]
 *                                            replay under Deno only; print (or write) the verdicts as JSON
 *
 * What is replayed: every test/fixtures/claude/*.jsonl (with the exit code of
 * its .exit.txt) through LineFramer → ClaudeReducer → decide, and every
 * test/fixtures/pi/*.jsonl (with the exit code, signal and stderr of its
 * .exit.txt / .stderr.txt) through LineFramer → PiReducer → judgePi → decide;
 * and every test/fixtures/codex, gemini, opencode and opencode-serve capture through its reducer (codex
 * with its stderr, for the refusals) and the judge.
 * Each file is fed in 7-byte chunks and again whole, so the framer's
 * chunk-boundary paths run too; for every fixture the verdict, the progress
 * events and the framing stats are compared.
 *
 * The harness itself reads files with node:fs, which both runtimes provide;
 * only src/core is under test (test/deno.test.ts also greps src/core for
 * Bun or Node imports). Exit status: 0 same verdicts, 1 a difference or a
 * crash under either runtime, 2 Deno not found.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { z } from "zod";
import { provideZod } from "../src/core/lazy-schema.ts";
import { LineFramer } from "../src/core/frame.ts";
import { ClaudeReducer } from "../src/core/claude/reducer.ts";
import { ENVELOPE_TOOL, PiReducer } from "../src/core/pi/reducer.ts";
import { CodexReducer } from "../src/core/codex/reducer.ts";
import { GeminiReducer } from "../src/core/gemini/reducer.ts";
import { OpencodeReplayReducer } from "../src/core/opencode/replay.ts";
import { envelopeFromTool } from "../src/core/envelope.ts";
import { judge } from "../src/core/judge.ts";
import type { ProcessOutcome } from "../src/core/outcome.ts";
import { VerdictSchema } from "../src/core/verdict.ts";
import type { ProgressEvent } from "../src/core/progress.ts";
import type { Reducer } from "../src/core/reduction.ts";

// The schemas' zod, under either runtime (src/io/zod.ts is Bun's way).
provideZod(() => z);

// Resolved against this file, so the script works from any folder and under either runtime.
const ROOT = new URL("..", import.meta.url).pathname;
const FIXTURES = `${ROOT}test/fixtures`;

interface Replayed {
  fixture: string;
  chunked: unknown;
  whole: unknown;
}

function feed(reducer: Reducer, bytes: Uint8Array, chunk: number): { lines: number; bytes: number; oversize: number } {
  const framer = new LineFramer(reducer);
  for (let at = 0; at < bytes.length; at += chunk) framer.push(bytes.subarray(at, Math.min(bytes.length, at + chunk)));
  framer.end();
  reducer.streamEnded();
  return { ...framer.stats };
}

function claude(bytes: Uint8Array, exitCode: number | null, chunk: number): unknown {
  const events: ProgressEvent[] = [];
  const reducer = new ClaudeReducer({ cwd: "/tmp/project", emit: (e) => events.push(e) });
  const stats = feed(reducer, bytes, chunk);
  const process: ProcessOutcome = { exitCode, signal: null, stoppedBy: null, stderrTail: "" };
  const { verdict, fault } = judge({ agent: "claude", reduction: reducer.reduction(), proc: process });
  VerdictSchema.parse(verdict);
  return { verdict, fault, events, stats, settled: reducer.settled() };
}

function pi(bytes: Uint8Array, process: ProcessOutcome, chunk: number): unknown {
  const events: ProgressEvent[] = [];
  const reducer = new PiReducer({ cwd: "/tmp/project", emit: (e) => events.push(e) });
  const stats = feed(reducer, bytes, chunk);
  const reading = reducer.reduction();
  const envelope = { check: null, delivered: envelopeFromTool(ENVELOPE_TOOL, reading.envelope, reading.envelopeError), nudges: 0 };
  const { verdict, fault } = judge({ agent: "pi", reduction: reading, proc: process, envelope });
  VerdictSchema.parse(verdict);
  return { verdict, fault, events, stats };
}

/** codex (its stderr handed over, as the phase does), gemini and opencode: the exit code of the capture. */
function stream(
  agent: "codex" | "gemini" | "opencode",
  bytes: Uint8Array,
  exitCode: number | null,
  stderr: string,
  chunk: number,
): unknown {
  const events: ProgressEvent[] = [];
  const emit = (e: ProgressEvent) => events.push(e);
  const reducer =
    agent === "codex"
      ? new CodexReducer({ cwd: "/tmp/project", emit })
      : agent === "gemini"
        ? new GeminiReducer({ cwd: "/tmp/project", emit })
        : new OpencodeReplayReducer({ cwd: "/tmp/project", emit });
  const stats = feed(reducer, bytes, chunk);
  if (reducer instanceof CodexReducer) reducer.takeStderr(stderr);
  const process: ProcessOutcome = { exitCode, signal: null, stoppedBy: null, stderrTail: "" };
  const { verdict, fault } = judge({ agent, reduction: reducer.reduction(), proc: process });
  VerdictSchema.parse(verdict);
  return { verdict, fault, events, stats };
}

const read = (path: string): string | null => (existsSync(path) ? readFileSync(path, "utf8") : null);

/** The replay of every fixture under this runtime. */
export function replayAll(): Replayed[] {
  const out: Replayed[] = [];
  const claudeDir = `${FIXTURES}/claude`;
  for (const name of readdirSync(claudeDir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()) {
    const base = name.slice(0, -".jsonl".length);
    const bytes = new Uint8Array(readFileSync(`${claudeDir}/${name}`));
    const exitText = read(`${claudeDir}/${base}.exit.txt`);
    const exitCode = exitText === null ? null : Number(exitText.trim());
    out.push({ fixture: `claude/${name}`, chunked: claude(bytes, exitCode, 7), whole: claude(bytes, exitCode, bytes.length || 1) });
  }
  const piDir = `${FIXTURES}/pi`;
  for (const name of readdirSync(piDir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()) {
    const base = name.slice(0, -".jsonl".length);
    const bytes = new Uint8Array(readFileSync(`${piDir}/${name}`));
    const exit = JSON.parse(read(`${piDir}/${base}.exit.txt`) ?? "{}") as { exitCode?: number | null; signal?: string | null };
    const process: ProcessOutcome = {
      exitCode: exit.exitCode ?? null,
      signal: exit.signal ?? null,
      stoppedBy: null,
      stderrTail: (read(`${piDir}/${base}.stderr.txt`) ?? "").slice(-4096),
    };
    out.push({ fixture: `pi/${name}`, chunked: pi(bytes, process, 7), whole: pi(bytes, process, bytes.length || 1) });
  }
  // opencode's serve events (test/fixtures/opencode-serve) go through the same replay reducer, which tells the two kinds apart.
  for (const [agent, folder] of [
    ["codex", "codex"],
    ["gemini", "gemini"],
    ["opencode", "opencode"],
    ["opencode", "opencode-serve"],
  ] as const) {
    const dir = `${FIXTURES}/${folder}`;
    for (const name of readdirSync(dir)
      .filter((f) => f.endsWith(".jsonl"))
      .sort()) {
      const base = name.slice(0, -".jsonl".length);
      const bytes = new Uint8Array(readFileSync(`${dir}/${name}`));
      const exitText = read(`${dir}/${base}.exit.txt`);
      const exitCode = exitText === null ? null : Number(exitText.trim());
      const stderr = read(`${dir}/${base}.stderr.txt`) ?? "";
      out.push({
        fixture: `${folder}/${name}`,
        chunked: stream(agent, bytes, exitCode, stderr, 7),
        whole: stream(agent, bytes, exitCode, stderr, bytes.length || 1),
      });
    }
  }
  return out;
}

/** Every path where two JSON values differ, bounded. */
export function differences(a: unknown, b: unknown, path = "", out: string[] = []): string[] {
  if (out.length >= 20) return out;
  if (a === b) return out;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") {
    out.push(`${path || "(root)"}: ${JSON.stringify(a)?.slice(0, 200)} ≠ ${JSON.stringify(b)?.slice(0, 200)}`);
    return out;
  }
  if (Array.isArray(a) !== Array.isArray(b)) {
    out.push(`${path}: array vs object`);
    return out;
  }
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  for (const k of new Set([...ka, ...kb]))
    differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`, out);
  return out;
}

type DenoNS = { version: { deno: string }; exit(code: number): never };
const deno = (globalThis as { Deno?: DenoNS }).Deno;

function runtimeName(): string {
  if (deno) return `deno ${deno.version.deno}`;
  const bun = (globalThis as { Bun?: { version: string } }).Bun;
  return bun ? `bun ${bun.version}` : "unknown runtime";
}

function findDeno(): string | null {
  const local = `${ROOT}node_modules/.bin/deno`;
  if (existsSync(local)) return local;
  return Bun.which("deno");
}

async function compareUnderBun(): Promise<number> {
  const started = performance.now();
  const mine = replayAll();
  const denoBin = findDeno();
  if (denoBin === null) {
    console.error("deno-check: deno not found (node_modules/.bin/deno or PATH); `npm ci` installs it as a devDependency");
    return 2;
  }
  const proc = Bun.spawn(
    [
      denoBin,
      "run",
      "--allow-read",
      "--no-prompt",
      "--no-remote",
      "--no-config",
      "--node-modules-dir=manual",
      `${ROOT}scripts/deno-check.ts`,
    ],
    { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" } },
  );
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) {
    console.error(`deno-check: the replay under Deno failed (exit ${code}):\n${stderr.trim().slice(-2000)}`);
    return 1;
  }
  let theirs: { runtime: string; replayed: Replayed[] };
  try {
    theirs = JSON.parse(stdout);
  } catch {
    console.error(`deno-check: Deno printed no JSON: ${stdout.slice(0, 300)} ${stderr.slice(-500)}`);
    return 1;
  }
  const problems: string[] = [];
  const byName = new Map(theirs.replayed.map((r) => [r.fixture, r]));
  for (const r of mine) {
    const other = byName.get(r.fixture);
    if (other === undefined) {
      problems.push(`${r.fixture}: not replayed under Deno`);
      continue;
    }
    // Compare through JSON, as Deno's side arrived.
    const diff = differences(JSON.parse(JSON.stringify(r)), other);
    for (const d of diff) problems.push(`${r.fixture}${d.startsWith(".") ? "" : " "}${d}`);
  }
  if (theirs.replayed.length !== mine.length) problems.push(`Deno replayed ${theirs.replayed.length} fixtures, Bun ${mine.length}`);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (problems.length > 0) {
    console.error(`deno-check: ${problems.length} difference(s) between ${runtimeName()} and ${theirs.runtime}:`);
    for (const p of problems.slice(0, 40)) console.error(`  ${p}`);
    return 1;
  }
  const statuses = new Map<string, number>();
  for (const r of mine) {
    const s = (r.whole as { verdict: { status: string } }).verdict.status;
    statuses.set(s, (statuses.get(s) ?? 0) + 1);
  }
  const tally = [...statuses].map(([s, n]) => `${n} ${s}`).join(", ");
  console.log(
    `deno-check: ${mine.length} fixtures (${tally}), the same verdicts, progress and framing under ${theirs.runtime} and ${runtimeName()} (${seconds} s)`,
  );
  return 0;
}

if (import.meta.main) {
  if (deno) {
    const args = (globalThis as unknown as { Deno: { args: string[] } }).Deno.args;
    const outAt = args.indexOf("--out");
    const json = JSON.stringify({ runtime: runtimeName(), replayed: replayAll() });
    if (outAt >= 0 && args[outAt + 1]) writeFileSync(args[outAt + 1] as string, json);
    else console.log(json);
  } else {
    process.exit(await compareUnderBun());
  }
}
