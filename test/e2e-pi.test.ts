// Real pi 0.73.1 (the devDependency), driven through the compiled binary,
// against a loopback stand-in of the OpenAI streaming API. No key, no network.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { BIN, ROOT } from "./helpers.ts";
import { piEnv, startOpenAIStandin, type Standin } from "./standins/openai.ts";
import type { Script } from "./standins/util.ts";
import { removeTempDirs, tempDir } from "./standins/util.ts";
import { agentport } from "./standins/world.ts";

const PI = join(ROOT, "node_modules", ".bin", "pi");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

interface World {
  dir: string;
  project: string;
  home: string;
  env: Record<string, string>;
  standin: Standin;
}

function world(script: Script): World {
  const dir = tempDir("agentport-e2e-pi-");
  const standin = startOpenAIStandin(script);
  standins.push(standin);
  const project = join(dir, "project");
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "hello.txt"), "hi from hello.txt\n");
  const home = join(dir, "agentport");
  return {
    dir,
    project,
    home,
    standin,
    env: { ...piEnv(dir, standin.url), AGENTPORT_HOME: home, AGENTPORT_PI_BIN: PI, AGENTPORT_GATEWAY: "" },
  };
}

const run = (w: World, prompt: string, extra: string[] = []) =>
  agentport(w, ["run", "--agent", "pi", "--model", "standin/standin-model", "--json", "--progress", "lines", ...extra, "-"], {
    stdin: prompt,
  });

describe("agentport run --agent pi with the real pi 0.73.1", () => {
  test("a text answer: text, tokens, cost, the session declared in the ledger", async () => {
    const w = world([{ text: "The answer is 4." }]);
    const { code, verdict, stderr } = await run(w, "What is 2+2?");
    expect(code).toBe(0);
    expect(verdict).toMatchObject({ agent: "pi", status: "completed", ok: true, text: "The answer is 4.", stop_reason: "stop" });
    expect(verdict?.cost_micro_usd).toBeGreaterThan(0);
    expect(verdict?.tokens?.input).toBeGreaterThan(0);
    expect(stderr).toContain("pi: started");
    // The prompt went on stdin and arrived whole.
    expect(JSON.stringify(w.standin.requests[0]?.messages)).toContain("What is 2+2?");
    const db = new Database(join(w.home, "ledger.sqlite"), { readonly: true });
    const row = db.query<{ id: string; cwd: string; session_file: string }, []>("SELECT id, cwd, session_file FROM sessions").get();
    expect(row?.id).toBe(verdict?.session_id ?? "");
    expect(row?.cwd).toBe(w.project);
    expect(readFileSync(row?.session_file ?? "", "utf8")).toContain(row?.id ?? "?");
    db.close();
  });

  test("a tool call then text: the tool shows in progress with its path", async () => {
    const w = world([{ toolCall: { name: "read", arguments: { path: "hello.txt" } } }, { text: "The file says hi." }]);
    const { code, verdict, stderr } = await run(w, "Read hello.txt");
    expect(code).toBe(0);
    expect(verdict?.text).toBe("The file says hi.");
    expect(stderr).toContain("pi: tool read hello.txt");
    expect(verdict?.summary.tool_calls).toBe(1);
    expect(w.standin.requests.length).toBe(2);
  });

  test("a 500 retried then failed: exit 1, the error named, retries shown", async () => {
    const w = world([{ status: 500 }]);
    const { code, verdict, stderr } = await run(w, "Say hi");
    expect(code).toBe(1);
    expect(verdict?.status).toBe("failed");
    expect(verdict?.failure?.message).toContain("pi: stopped on error: 500");
    expect(stderr).toContain("pi: provider retry (attempt 1 of 2)");
    expect(w.standin.requests.length).toBe(3);
  });

  test("a 429 then success", async () => {
    const w = world([{ status: 429 }, { text: "Recovered." }]);
    const { code, verdict } = await run(w, "Say hi");
    expect(code).toBe(0);
    expect(verdict?.text).toBe("Recovered.");
    expect(verdict?.summary.provider_retries).toBe(1);
  });

  test("an envelope through report_phase, validated by the default schema; the inventory proves the extension", async () => {
    const envelope = { status: "success", summary: "Read the file.", changed_files: [] };
    const w = world([{ toolCall: { name: "report_phase", arguments: envelope } }, { text: "Reported." }]);
    const { code, verdict } = await run(w, "Report", ["--envelope", "--tools", "read", "--require-ext", "agentport"]);
    expect(code).toBe(0);
    expect(verdict?.envelope).toEqual(envelope);
    // --tools is an allowlist: the envelope tool was appended to it.
    const tools = (w.standin.requests[0]?.tools ?? []).map((t: { function: { name: string } }) => t.function.name).sort();
    expect(tools).toEqual(["read", "report_phase"]);
  });

  test("an envelope that breaks the schema fails naming the error", async () => {
    const w = world([
      { toolCall: { name: "report_phase", arguments: { status: "maybe", summary: "x", changed_files: [] } } },
      { text: "Reported." },
    ]);
    const { code, verdict } = await run(w, "Report", ["--envelope"]);
    expect(code).toBe(1);
    expect(verdict?.failure?.kind).toBe("envelope_invalid");
    expect(verdict?.failure?.message).toContain("invalid envelope: Validation failed");
    expect(verdict?.failure?.message).toContain("status");
  });

  test("resume in the birth folder continues the session; from another folder it is refused with zero requests", async () => {
    const w = world([{ text: "First answer." }, { text: "Second answer." }]);
    const first = await run(w, "First question");
    expect(first.code).toBe(0);
    const id = first.verdict?.session_id ?? "";
    const second = await agentport(w, ["resume", id.slice(0, 8), "--json", "-"], { stdin: "Second question" });
    expect(second.code).toBe(0);
    expect(second.verdict?.text).toBe("Second answer.");
    expect(second.verdict?.session_id).toBe(id);
    // The history went back to the model: the same session.
    expect(JSON.stringify(w.standin.requests[1]?.messages)).toContain("First question");

    const elsewhere = join(w.dir, "elsewhere");
    mkdirSync(elsewhere);
    const before = w.standin.requests.length;
    const refused = await agentport(w, ["resume", id, "Third question"], { cwd: elsewhere });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`refused: session ${id} (pi) was born in ${w.project}, not in ${elsewhere}`);
    expect(refused.stderr.trim().split("\n").length).toBe(1);
    expect(w.standin.requests.length).toBe(before);
    expect(w.standin.log.length).toBe(before);

    const show = await agentport(w, ["show", id, "--json"]);
    const shown = JSON.parse(show.stdout);
    expect(shown.phases.map((p: { kind: string; status: string }) => `${p.kind}:${p.status}`)).toEqual([
      "run:completed",
      "resume:completed",
    ]);
  });

  test("kill -9 of agentport mid-phase leaves the ledger row; a later resume continues the session", async () => {
    const w = world([{ text: "First answer." }, { text: "Slow second answer.", delayMs: 3000 }, { text: "After the crash." }]);
    const first = await run(w, "First question");
    const id = first.verdict?.session_id ?? "";
    expect(first.code).toBe(0);
    const proc = Bun.spawn([BIN, "resume", id, "-"], {
      cwd: w.project,
      env: w.env,
      stdin: new TextEncoder().encode("Second question"),
      stdout: "ignore",
      stderr: "ignore",
    });
    for (let i = 0; i < 400 && w.standin.requests.length < 2; i++) await Bun.sleep(25);
    expect(w.standin.requests.length).toBe(2);
    proc.kill("SIGKILL");
    await proc.exited;
    const db = new Database(join(w.home, "ledger.sqlite"));
    const phases = db.query<{ seq: number; ended_at: string | null }, []>("SELECT seq, ended_at FROM phases ORDER BY seq").all();
    expect(db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()?.integrity_check).toBe("ok");
    db.close();
    // The declared phase survives the crash, unfinished.
    expect(phases.map((p) => [p.seq, p.ended_at === null])).toEqual([
      [1, false],
      [2, true],
    ]);
    const resumed = await agentport(w, ["resume", id, "--json", "Third question"]);
    expect(resumed.code).toBe(0);
    expect(resumed.verdict?.text).toBe("After the crash.");
    expect(resumed.verdict?.session_id).toBe(id);
    // The same session: the first exchange went back to the model.
    const last = JSON.stringify(w.standin.requests[w.standin.requests.length - 1]?.messages);
    expect(last).toContain("First question");
    expect(last).toContain("First answer.");
  });

  test("a stand-in that hangs mid-stream: stalled after --stall S, and no process of the run is left", async () => {
    const w = world([{ text: "Starting a long answer that never ends.", chunkDelayMs: 20_000 }]);
    const { code, verdict } = await run(w, "Say something long", ["--stall", "2"]);
    expect(code).toBe(4);
    expect(verdict?.status).toBe("stalled");
    expect(verdict?.failure?.message).toContain("no output from the agent for 2 s");
    // Every process of the run had this world's folder on its command line (pi's --session file).
    const left = Bun.spawnSync(["pgrep", "-f", w.dir]).stdout.toString().trim();
    expect(left).toBe("");
  });

  test('stall after text: "Let me look." and a tool call, then the next reply hangs: stalled (exit 4), never completed', async () => {
    const w = world([
      { text: "Let me look.", toolCall: { name: "read", arguments: { path: "hello.txt" } } },
      { text: "never", delayMs: 60_000 },
    ]);
    // Long enough for pi to start on a loaded machine: the stall must come after the text.
    const { code, verdict } = await run(w, "Read hello.txt", ["--stall", "20"]);
    expect(code).toBe(4);
    expect(verdict).toMatchObject({ status: "stalled", ok: false, text: null, failure: { kind: "stopped", cause: "stall" } });
    expect(verdict?.summary.assistant_messages, JSON.stringify({ summary: verdict?.summary, posts: w.standin.requests.length })).toBe(1);
  });

  test("envelope then 500: the delivered envelope is the deliverable, the later error a warning", async () => {
    const envelope = { status: "success", summary: "Read hello.txt.", changed_files: [] };
    const w = world([{ toolCall: { name: "report_phase", arguments: envelope } }, { status: 500 }]);
    const { code, verdict } = await run(w, "Report", ["--envelope"]);
    expect(code).toBe(0);
    expect(verdict).toMatchObject({ status: "completed", ok: true, envelope, failure: null, summary: { warning_kind: "provider_error" } });
    expect(String(verdict?.summary.warning)).toContain("500");
    // pi was told about the envelope in the tool's description and the system prompt.
    const first = w.standin.requests[0] ?? {};
    expect(JSON.stringify(first.tools)).toContain("The envelope must match this JSON Schema");
    expect(JSON.stringify(first.messages)).toContain("call the report_phase tool exactly once");
  });

  test("the capability probe is cached in the ledger by path, size and mtime", async () => {
    const w = world([{ text: "ok" }]);
    await run(w, "hi");
    const db = new Database(join(w.home, "ledger.sqlite"), { readonly: true });
    const probe = db.query<{ data: string }, []>("SELECT data FROM probes").get();
    db.close();
    const caps = JSON.parse(probe?.data ?? "{}");
    expect(caps.version).toBe("0.73.1");
    expect(caps.flags["--session-id"]).toBe(false);
    expect(caps.flags["--session"]).toBe(true);
    expect(existsSync(PI)).toBe(true);
  });
});
