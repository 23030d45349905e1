// Run folders through the compiled binary and the fake agents: one folder per
// phase (a nudge gets its own), holding the verdict as printed, the stream
// (replay gives the verdict back, by file or by session id), the progress
// records, the command; the prompt only as a hash; show names the folder;
// prune removes old folders and keeps the ledger's rows.
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentport, fakeProject, type FakeProject } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function world(dialect = "0.73.1"): FakeProject {
  const w = fakeProject("agentport-runs-", {
    AGENTPORT_FAKE_PI_DIALECT: dialect,
    AGENTPORT_GATEWAY: "",
    GEMINI_CLI_TRUST_WORKSPACE: "true",
  });
  made.push(w.root);
  return w;
}

interface PhaseJson {
  seq: number;
  kind: string;
  run_dir: string | null;
}

type Agent = "claude" | "pi" | "codex" | "gemini" | "opencode";

async function run(w: FakeProject, agent: Agent, extra: string[] = [], scenario?: string) {
  const ran = await agentport(["run", "--agent", agent, "--json", "--progress", "off", ...extra, "say hello"], {
    cwd: w.proj,
    env: scenario === undefined ? w.env : { ...w.env, AGENTPORT_FAKE_SCENARIO: scenario },
  });
  const verdict = JSON.parse(ran.stdout);
  const show = await agentport(["show", "--json", verdict.session_id], { cwd: w.proj, env: w.env });
  const phases = JSON.parse(show.stdout).phases as PhaseJson[];
  return { ...ran, verdict, phases, dir: phases.at(-1)!.run_dir! };
}

/** A verdict without what only a live process has (its exit code, whether it was isolated, the probed version: a stream names it only for claude). */
function unlived(verdict: Record<string, unknown>): Record<string, unknown> {
  const { exit_code: _, ...summary } = verdict.summary as Record<string, unknown>;
  const { isolated: _isolated, agent_version: _version, agent_version_tested: _tested, ...rest } = verdict;
  return { ...rest, summary };
}

describe.each([
  ["claude", "0.73.1"],
  ["pi", "0.73.1"],
  ["pi", "0.85"],
  ["codex", "0.73.1"],
  ["gemini", "0.73.1"],
  ["opencode", "0.73.1"],
] as const)("%s (fake pi dialect %s)", (agent, dialect) => {
  test("the run folder holds the verdict as printed, the stream, the progress, the command; the prompt only as its hash", async () => {
    const w = world(dialect);
    const { code, stdout, verdict, dir } = await run(w, agent);
    expect(code).toBe(0);
    expect(
      readdirSync(dir)
        .filter((f) => !["inventory.json", "envelope.schema.json"].includes(f))
        .sort(),
    ).toEqual(["argv.json", "progress.ndjson", "stderr.log", "stream.jsonl", "verdict.json"]);
    expect(readFileSync(join(dir, "verdict.json"), "utf8")).toBe(stdout);
    const argv = JSON.parse(readFileSync(join(dir, "argv.json"), "utf8"));
    expect(argv.agent).toBe(agent);
    expect(argv.argv[0]).toBe(w.env[`AGENTPORT_${agent.toUpperCase()}_BIN`]);
    expect(argv.prompt).toEqual({ sha256: createHash("sha256").update("say hello").digest("hex"), bytes: 9, kept: false });
    // Every agent agentport probes before it runs: all but claude.
    if (agent === "claude") expect(argv.agent_version).toBeNull();
    else expect(argv.agent_version).toMatch(/^\d+\.\d+\.\d+/);
    // pi echoes the prompt in its stream: withheld there too.
    for (const file of readdirSync(dir)) expect(readFileSync(join(dir, file), "utf8")).not.toContain("say hello");
    if (agent === "pi") expect(readFileSync(join(dir, "stream.jsonl"), "utf8")).toContain("[prompt withheld]");
    const progress = readFileSync(join(dir, "progress.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(progress.length).toBeGreaterThan(1);
    for (const record of progress) {
      expect(record).toMatchObject({ session_id: verdict.session_id, agent });
      expect(new Date(record.ts).toISOString()).toBe(record.ts);
      // The running totals, on every record.
      expect(Object.hasOwn(record, "tokens") && Object.hasOwn(record, "cost_micro_usd")).toBe(true);
    }
    expect(progress.at(-1)).toMatchObject({
      kind: "verdict",
      status: verdict.status,
      tokens: verdict.tokens,
      cost_micro_usd: verdict.cost_micro_usd,
      exit_code: code,
    });
  });

  test("replay of the stream by session id gives the verdict back; by file too, but for the session an agent names itself", async () => {
    const w = world(dialect);
    const { verdict, dir } = await run(w, agent);
    // The session's agent is the default; a prefix will do.
    const byId = await agentport(["replay", "--json", verdict.session_id.slice(0, 13)], { cwd: w.proj, env: w.env });
    expect(byId.code).toBe(0);
    expect(unlived(JSON.parse(byId.stdout))).toEqual(unlived(verdict));
    const byFile = await agentport(["replay", "--agent", agent, "--json", join(dir, "stream.jsonl")], { cwd: w.proj, env: w.env });
    expect(byFile.code).toBe(0);
    const learned = { codex: "thread_id", opencode: "opencode_session_id" } as Record<string, string>;
    if (learned[agent] === undefined) expect(byFile.stdout).toBe(byId.stdout);
    // A file does not say agentport's session: the verdict names the agent's own (and codex's refusals are the stream's).
    else expect(JSON.parse(byFile.stdout).session_id).toBe(verdict.summary[learned[agent]]);
    // With --progress json: the session's events with their running totals, then the verdict's record, as the run wrote them.
    const shown = await agentport(["replay", "--progress", "json", verdict.session_id], { cwd: w.proj, env: w.env });
    const records = shown.stderr
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((r) => r.kind !== "log");
    for (const r of records) expect(r).toMatchObject({ session_id: verdict.session_id, agent });
    const kept = readFileSync(join(dir, "progress.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const { ts: _a, ...last } = records.at(-1);
    const { ts: _b, ...keptLast } = kept.at(-1);
    expect(last).toEqual(keptLast);
    expect(records.at(-2)).toMatchObject({ tokens: verdict.tokens, cost_micro_usd: verdict.cost_micro_usd });
  });
});

describe("run folders", () => {
  test("a pi stream without its session header replays to the same verdict", async () => {
    const w = world();
    const { verdict, dir } = await run(w, "pi");
    const lines = readFileSync(join(dir, "stream.jsonl"), "utf8").split("\n");
    expect(JSON.parse(lines[0]!).type).toBe("session");
    const headerless = join(w.root, "headerless.jsonl");
    writeFileSync(headerless, lines.slice(1).join("\n"));
    const replayed = await agentport(["replay", "--agent", "pi", "--json", headerless], { cwd: w.proj, env: w.env });
    expect(replayed.code).toBe(0);
    // The same verdict, but for what the header gave: the session id, and one record fewer.
    const comparable = (v: Record<string, unknown>) => {
      const { session_id: _, summary, ...rest } = unlived(v);
      const { records: __, ...counted } = summary as Record<string, unknown>;
      return { ...rest, summary: counted };
    };
    const replayedVerdict = JSON.parse(replayed.stdout);
    expect(replayedVerdict.ok).toBe(true);
    expect(comparable(replayedVerdict)).toEqual(comparable(verdict));
  });

  test("replay of a resumed codex session gives the resume's verdict: its own tokens, less the thread's earlier ones", async () => {
    const w = world();
    const first = await run(w, "codex");
    const resumed = await agentport(["resume", first.verdict.session_id, "--json", "--progress", "off", "again"], {
      cwd: w.proj,
      env: w.env,
    });
    expect(resumed.code).toBe(0);
    const verdict = JSON.parse(resumed.stdout);
    expect(verdict.summary.thread_input_tokens).toBeGreaterThan(verdict.tokens.input + verdict.tokens.cache_read);
    const byId = await agentport(["replay", "--json", first.verdict.session_id], { cwd: w.proj, env: w.env });
    expect(unlived(JSON.parse(byId.stdout))).toEqual(unlived(verdict));
  });

  test("a nudge phase gets a folder of its own, and the last one keeps the run's verdict", async () => {
    const w = world();
    const { code, stdout, phases } = await run(w, "claude", ["--envelope", "--nudges", "2"], "envelope-late");
    expect(code).toBe(0);
    expect(phases.map((p) => p.kind)).toEqual(["run", "nudge"]);
    const [first, second] = phases.map((p) => p.run_dir!);
    expect(first).not.toBe(second);
    expect(readFileSync(join(second!, "verdict.json"), "utf8")).toBe(stdout);
    expect(JSON.parse(readFileSync(join(first!, "verdict.json"), "utf8")).ok).toBe(false);
  });

  test("show prints each phase's run folder", async () => {
    const w = world();
    const { verdict, dir } = await run(w, "claude");
    const show = await agentport(["show", verdict.session_id], { cwd: w.proj, env: w.env });
    expect(show.stdout).toContain(`run folder ${dir}`);
  });

  test("--keep-stream off keeps no stream, --keep-prompt keeps the prompt, a bad value is refused", async () => {
    const w = world();
    const off = await run(w, "claude", ["--keep-stream", "off", "--keep-prompt"]);
    expect(existsSync(join(off.dir, "stream.jsonl"))).toBe(false);
    expect(readFileSync(join(off.dir, "prompt.txt"), "utf8")).toBe("say hello");
    expect(JSON.parse(readFileSync(join(off.dir, "argv.json"), "utf8")).prompt.kept).toBe(true);
    const bad = await agentport(["run", "--agent", "claude", "--keep-stream", "maybe", "hi"], { cwd: w.proj, env: w.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--keep-stream must be on or off, got "maybe"');
  });

  test("the roster's keep_stream: false keeps no stream", async () => {
    const w = world();
    writeFileSync(join(w.proj, "agentport.json"), JSON.stringify({ agents: { quiet: { agent: "claude", keep_stream: false } } }));
    const ran = await agentport(["run", "--config", join(w.proj, "agentport.json"), "--as", "quiet", "--json", "hi"], {
      cwd: w.proj,
      env: w.env,
    });
    expect(ran.code).toBe(0);
    const show = await agentport(["show", "--json", JSON.parse(ran.stdout).session_id], { cwd: w.proj, env: w.env });
    const dir = (JSON.parse(show.stdout).phases as PhaseJson[])[0]!.run_dir!;
    expect(existsSync(join(dir, "verdict.json"))).toBe(true);
    expect(existsSync(join(dir, "stream.jsonl"))).toBe(false);
  });

  test("prune removes the old run folders, says what it freed, and keeps every ledger row", async () => {
    const w = world();
    const old = await run(w, "claude");
    const fresh = await run(w, "claude");
    const longAgo = new Date(Date.now() - 40 * 86_400_000);
    for (const file of [...readdirSync(old.dir).map((f) => join(old.dir, f)), old.dir]) utimesSync(file, longAgo, longAgo);
    const bad = await agentport(["prune", "--older-than", "a month"], { cwd: w.proj, env: w.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--older-than must be a number with s, m, h or d");
    const pruned = await agentport(["prune", "--older-than", "30d", "--json"], { cwd: w.proj, env: w.env });
    expect(pruned.code).toBe(0);
    const report = JSON.parse(pruned.stdout);
    expect(report).toMatchObject({ removed: 1, dry_run: false });
    expect(report.bytes).toBeGreaterThan(0);
    expect(existsSync(old.dir)).toBe(false);
    expect(existsSync(fresh.dir)).toBe(true);
    const show = await agentport(["show", "--json", old.verdict.session_id], { cwd: w.proj, env: w.env });
    expect(JSON.parse(show.stdout).phases).toHaveLength(1);
  });
});
