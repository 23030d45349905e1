// Flood: the real driver (`agentport run --agent claude`, the compiled binary
// driving itself as the fake claude) through a 300 MiB line and a 1 GiB
// stream. The run must finish, agentport's own peak RSS must stay flat (read
// from /proc/<pid>/status VmHWM while it runs; a generous bound, not a
// benchmark), and the verdict must count the skipped lines exactly.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema, type Verdict } from "../src/core/verdict.ts";
import { BIN, tempDir } from "./helpers.ts";

const MIB = 1024 * 1024;
/** Generous: agentport replays 300 MB lines in ~60 MB (scripts/bench-memory.ts). */
const RSS_LIMIT_MIB = 200;

let dir: string;
let fake: string;

beforeAll(() => {
  dir = tempDir("agentport-flood-");
  fake = join(dir, "fake-claude");
  symlinkSync(BIN, fake);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Peak RSS (VmHWM) of a running process in KiB, or null without /proc. */
function hwmKiB(pid: number): number | null {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

interface Flooded {
  code: number;
  verdict: Verdict;
  stderr: string;
  peakMiB: number | null;
  seconds: number;
}

async function flood(scenario: string, extra: string[] = []): Promise<Flooded> {
  const started = performance.now();
  const proc = Bun.spawn(
    [BIN, "run", "--agent", "claude", "--claude-bin", fake, "--json", "--progress", "off", "--timeout", "600", ...extra, "flood"],
    {
      cwd: dir,
      env: { ...process.env, NO_COLOR: "1", AGENTPORT_HOME: join(dir, "home"), AGENTPORT_FAKE_SCENARIO: scenario },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  // VmHWM only grows: the last reading before the exit is the peak up to then.
  let peak: number | null = null;
  const poll = setInterval(() => {
    const kib = hwmKiB(proc.pid);
    if (kib !== null) peak = Math.max(peak ?? 0, kib);
  }, 25);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearInterval(poll);
  let verdict: Verdict;
  try {
    verdict = VerdictSchema.parse(JSON.parse(stdout));
  } catch {
    throw new Error(`no verdict on stdout (exit ${code}): ${stdout.slice(0, 300)} / ${stderr.slice(-800)}`);
  }
  const peakMiB = peak === null ? null : (peak as number) / 1024;
  const seconds = (performance.now() - started) / 1000;
  console.error(
    `flood: exit ${code}, ${seconds.toFixed(1)} s, agentport peak RSS ${peakMiB === null ? "n/a (no /proc)" : `${peakMiB.toFixed(1)} MiB`}, summary ${JSON.stringify(verdict.summary)}`,
  );
  return { code, verdict, stderr, peakMiB, seconds };
}

function expectFlat(peakMiB: number | null): void {
  if (peakMiB === null) {
    if (existsSync("/proc/self/status")) throw new Error("no VmHWM reading although /proc exists");
    console.error("flood: no /proc here; memory not checked");
    return;
  }
  expect(peakMiB).toBeGreaterThan(1);
  expect(peakMiB).toBeLessThan(RSS_LIMIT_MIB);
}

describe("flood through the real driver (fake claude)", () => {
  test("one 300 MiB line: skipped as it streams past, counted, the run completes, memory flat", async () => {
    const scenario = JSON.stringify({
      steps: [{ text: "Reading a huge file." }, { oversize: 300 * MIB }, { text: "Read it." }, { result: { text: "Read it." } }],
    });
    const r = await flood(scenario);
    expect(r.code).toBe(0);
    expect(r.verdict).toMatchObject({ status: "completed", ok: true, text: "Read it.", failure: null });
    expect(r.verdict.summary).toMatchObject({ oversize_records: 1, results: 1 });
    expectFlat(r.peakMiB);
  });

  test("one 300 MiB line where the result should be: the failure names the skipped line", async () => {
    // The result itself is past --max-line-bytes: the run cannot be judged a success, and says why.
    const scenario = JSON.stringify({
      steps: [
        { text: "x" },
        { oversize: 300 * MIB },
        { raw: `{"type":"result","subtype":"success","is_error":false,"result":"${"y".repeat(64 * 1024)}"}` },
      ],
    });
    const r = await flood(scenario, ["--max-line-bytes", String(32 * 1024)]);
    expect(r.code).toBe(1);
    expect(r.verdict.status).toBe("failed");
    expect(r.verdict.failure?.message).toContain("2 line(s) past the per-line bound were skipped");
    expect(r.verdict.summary).toMatchObject({ oversize_records: 2 });
    expectFlat(r.peakMiB);
  });

  test("a 1 GiB stream of 64 KiB lines with 8 lines of 9 MiB: the run completes, the 8 are counted, memory flat", async () => {
    // 1024 blocks of: one Read tool call (2 lines), 15 tool_result lines of 64 KiB; every 128th block
    // also a 9 MiB line (past the default 8 MiB bound). About 1.07 GiB, 19,500 lines.
    const steps: unknown[] = [];
    for (let b = 0; b < 1024; b++) {
      steps.push({ tool: { name: "Read", input: { file_path: `src/module-${b}.ts` }, result: `contents of module ${b}` } });
      for (let i = 0; i < 15; i++) steps.push({ oversize: 64 * 1024 });
      if (b % 128 === 127) steps.push({ oversize: 9 * MIB });
    }
    steps.push({ text: "Read everything." }, { result: { text: "Read everything." } });
    const file = join(dir, "flood-1g.json");
    writeFileSync(file, JSON.stringify({ steps }));
    const r = await flood(file);
    expect(r.code).toBe(0);
    expect(r.verdict).toMatchObject({ status: "completed", ok: true, text: "Read everything." });
    // init + 1024 × (assistant + user + 15) + text + result, plus the 8 skipped.
    expect(r.verdict.summary).toMatchObject({ oversize_records: 8, records: 1 + 1024 * 17 + 2, tool_calls: 1024 });
    expectFlat(r.peakMiB);
  });
});
