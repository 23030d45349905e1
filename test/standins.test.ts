// Proves the loopback stand-ins (test/standins/) with the REAL agent CLIs, spawned directly:
// pi 0.73.1 against the OpenAI chat-completions stand-in, Claude Code 2.1.197 against the
// Anthropic Messages stand-in. Zero tokens, loopback only, each run in a fresh temp dir with a
// minimal env (PATH plus the helpers' env; never the real HOME).
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { piEnv, startOpenAIStandin } from "./standins/openai.ts";
import { claudeEnv, startAnthropicStandin } from "./standins/anthropic.ts";
import { removeTempDirs, spawnCollect, tempDir, type Reply, type Spawned, type Standin } from "./standins/util.ts";

const ROOT = join(import.meta.dir, "..");
const PI = join(ROOT, "node_modules", ".bin", "pi");
const CLAUDE = join(ROOT, "node_modules", ".bin", "claude");
/** One-shot json run, isolated from skills, prompt templates, context files and the network. */
const PI_ARGV = [
  PI,
  "--mode",
  "json",
  "--no-skills",
  "--no-prompt-templates",
  "--no-context-files",
  "--offline",
  "--model",
  "standin/standin-model",
];

afterAll(removeTempDirs);

const note = (what: string, r: Spawned, s: Standin) =>
  console.log(`[standins] ${what}: ${r.ms} ms, exit ${r.code}, ${s.requests.length} API request(s)`);

// ---------------------------------------------------------------------------------------------
// pi
// ---------------------------------------------------------------------------------------------

interface PiRun extends Spawned {
  dir: string;
  cwd: string;
  sessionDir: string;
  standin: Standin;
}

/** A fresh dir with `proj/` (the cwd) and `sessions/`; pi runs one-shot json with the prompt on stdin. */
async function runPi(
  script: Reply[],
  prompt: string,
  opts: { setup?: (cwd: string, dir: string) => void; timeoutMs?: number } = {},
): Promise<PiRun> {
  const dir = tempDir("agentport-pi-");
  const cwd = join(dir, "proj");
  const sessionDir = join(dir, "sessions");
  mkdirSync(cwd);
  opts.setup?.(cwd, dir);
  const standin = startOpenAIStandin(script);
  try {
    const env = { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin", ...piEnv(dir, standin.url) };
    const r = await spawnCollect([...PI_ARGV, "--session-dir", sessionDir], {
      cwd,
      env,
      stdin: prompt,
      timeoutMs: opts.timeoutMs ?? 30_000,
    });
    return { ...r, dir, cwd, sessionDir, standin };
  } finally {
    await standin.stop();
  }
}

const assistantEnds = (records: any[]) => records.filter((r) => r.type === "message_end" && r.message?.role === "assistant");
const types = (records: any[]) => records.map((r) => r.type as string);

describe("pi 0.73.1 against the OpenAI stand-in", () => {
  test("(a) text answer: last assistant message_end has the text, stopReason stop, cost > 0, exit 0", async () => {
    const r = await runPi([{ text: "Hello from the standin." }], "Say hello");
    note("pi (a) text", r, r.standin);
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(0);
    expect(r.records[0]).toMatchObject({ type: "session", version: 3, cwd: r.cwd });
    const last = assistantEnds(r.records).at(-1)!.message;
    expect(last.content).toEqual([{ type: "text", text: "Hello from the standin." }]);
    expect(last.stopReason).toBe("stop");
    expect(last.provider).toBe("standin");
    expect(last.usage.input).toBeGreaterThan(0);
    expect(last.usage.output).toBeGreaterThan(0);
    expect(last.usage.cost.total).toBeGreaterThan(0);
    expect(types(r.records).at(-1)).toBe("agent_end");
    expect(r.standin.requests.length).toBe(1);
    const req = r.standin.requests[0]!;
    expect(req).toMatchObject({ model: "standin-model", stream: true });
    expect(req.messages.at(-1)).toMatchObject({ role: "user" });
    expect(JSON.stringify(req.messages.at(-1).content)).toContain("Say hello");
  }, 45_000);

  test("(b) tool call: read of a file in the cwd, then text", async () => {
    const r = await runPi(
      [{ toolCall: { name: "read", arguments: { path: "notes.txt" } }, text: "Reading it." }, { text: "The file says hi." }],
      "Read notes.txt",
      { setup: (cwd) => writeFileSync(join(cwd, "notes.txt"), "hi from notes\n") },
    );
    note("pi (b) tool", r, r.standin);
    expect(r.code).toBe(0);
    const start = r.records.find((e) => e.type === "tool_execution_start");
    expect(start).toMatchObject({ toolName: "read", args: { path: "notes.txt" } });
    const end = r.records.find((e) => e.type === "tool_execution_end");
    expect(end).toMatchObject({ toolName: "read", isError: false, toolCallId: start.toolCallId });
    expect(JSON.stringify(end.result.content)).toContain("hi from notes");
    const ends = assistantEnds(r.records);
    expect(ends.map((e) => e.message.stopReason)).toEqual(["toolUse", "stop"]);
    expect(ends.at(-1).message.content).toEqual([{ type: "text", text: "The file says hi." }]);
    expect(types(r.records).filter((t) => t === "turn_end").length).toBe(2);
    expect(r.standin.requests.length).toBe(2);
    // The second request carries the tool result back to the model.
    const toolMsg = r.standin.requests[1]!.messages.find((m: any) => m.role === "tool");
    expect(toolMsg).toBeDefined();
    expect(JSON.stringify(toolMsg)).toContain("hi from notes");
  }, 45_000);

  test("(c) 500 every time: auto-retry gives up, stopReason error, exit 0 anyway", async () => {
    const r = await runPi([{ status: 500 }], "Say hello");
    note("pi (c) 500 always", r, r.standin);
    expect(r.code).toBe(0);
    const last = assistantEnds(r.records).at(-1)!.message;
    expect(last.stopReason).toBe("error");
    expect(last.errorMessage).toContain("500");
    expect(last.content).toEqual([]);
    const t = types(r.records);
    expect(t.filter((x) => x === "auto_retry_start").length).toBe(2);
    expect(t.filter((x) => x === "agent_end").length).toBe(3);
    // Final failure: auto_retry_end{success:false} comes after the last agent_end, as the last line.
    expect(r.records.at(-1)).toMatchObject({ type: "auto_retry_end", success: false, attempt: 2 });
    expect(r.records.at(-1).finalError).toContain("500");
    expect(r.records.find((e) => e.type === "auto_retry_start")).toMatchObject({ attempt: 1, maxAttempts: 2, delayMs: 50 });
    // pi retries 2 times; the OpenAI SDK's own retries are off (retry.provider.maxRetries 0).
    expect(r.standin.requests.length).toBe(3);
  }, 45_000);

  test("(d) 429 then success: auto_retry_start, then auto_retry_end{success:true} before the good turn_end", async () => {
    const r = await runPi([{ status: 429, retryAfter: 0 }, { text: "Recovered." }], "Say hello");
    note("pi (d) 429 then ok", r, r.standin);
    expect(r.code).toBe(0);
    const t = types(r.records);
    const iStart = t.indexOf("auto_retry_start");
    const iEnd = t.indexOf("auto_retry_end");
    expect(iStart).toBeGreaterThan(0);
    expect(t[iStart - 1]).toBe("agent_end");
    expect(r.records[iStart].errorMessage).toContain("429");
    expect(r.records[iEnd]).toMatchObject({ success: true, attempt: 1 });
    expect(t.slice(iEnd + 1)).toEqual(["turn_end", "agent_end"]);
    const ends = assistantEnds(r.records);
    expect(ends.map((e) => e.message.stopReason)).toEqual(["error", "stop"]);
    expect(ends.at(-1).message.content).toEqual([{ type: "text", text: "Recovered." }]);
    expect(r.standin.requests.length).toBe(2);
  }, 45_000);

  test("(e) the session file appears in --session-dir, its header carries the id", async () => {
    const r = await runPi([{ text: "Hello from the standin." }], "Say hello");
    note("pi (e) session file", r, r.standin);
    expect(r.code).toBe(0);
    const header = r.records[0];
    expect(header).toMatchObject({ type: "session", version: 3, cwd: r.cwd });
    const files = readdirSync(r.sessionDir);
    expect(files.length).toBe(1);
    // <ISO timestamp with : and . as ->_<uuid>.jsonl, directly in the dir (no per-cwd subfolder).
    expect(files[0]).toEndWith(`_${header.id}.jsonl`);
    const lines = readFileSync(join(r.sessionDir, files[0]!), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toEqual(header);
    const messages = lines.filter((l) => l.type === "message").map((l) => l.message.role);
    expect(messages).toEqual(["user", "assistant"]);
    expect(r.standin.requests.length).toBe(1);
  }, 45_000);

  // (f) Choosing the session id before the call. Finding (pi 0.73.1, checked by this test): writing
  // the header line {"type":"session","version":3,"id":<uuid>,"timestamp","cwd"} into a new file and
  // passing `--session <file>` makes pi use that id (stdout line 1 is our header, byte for byte) and
  // append to that file. At its first write pi appends the header once more, so the file starts
  // with two identical header lines; a later `--session <file>` still loads it, keeps the id and
  // sends the earlier exchange as history. This agrees with the ground truth.
  test("(f) a header line written beforehand + --session <file>: pi uses our id", async () => {
    const id = crypto.randomUUID();
    const dir = tempDir("agentport-pi-f-");
    const cwd = join(dir, "proj");
    mkdirSync(cwd);
    mkdirSync(join(dir, "chosen"));
    const file = join(dir, "chosen", "mine.jsonl");
    const header = { type: "session", version: 3, id, timestamp: new Date().toISOString(), cwd };
    writeFileSync(file, JSON.stringify(header) + "\n");
    const standin = startOpenAIStandin((_req, n) => ({ text: n === 1 ? "First answer." : "Second answer." }));
    try {
      const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", ...piEnv(dir, standin.url) };
      const argv = [...PI_ARGV, "--session", file];
      const r1 = await spawnCollect(argv, { cwd, env, stdin: "First question", timeoutMs: 30_000 });
      note("pi (f) chosen id, run 1", r1, standin);
      expect(r1.code).toBe(0);
      expect(r1.records[0]).toEqual(header);
      expect(assistantEnds(r1.records).at(-1).message.stopReason).toBe("stop");
      const lines = readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines[0]).toEqual(header);
      expect(lines[1]).toEqual(header); // pi wrote the header once more at its first write
      expect(lines.filter((l) => l.type === "session").length).toBe(2);
      expect(lines.filter((l) => l.type === "message").map((l) => l.message.role)).toEqual(["user", "assistant"]);
      // No other session file was made anywhere under the agent dir.
      expect(readdirSync(join(dir, "agent", "sessions"), { recursive: true }).filter((f) => String(f).endsWith(".jsonl"))).toEqual([]);

      const r2 = await spawnCollect(argv, { cwd, env, stdin: "Second question", timeoutMs: 30_000 });
      note("pi (f) chosen id, run 2 (resume)", r2, standin);
      expect(r2.code).toBe(0);
      expect(r2.records[0]).toEqual(header);
      expect(assistantEnds(r2.records).at(-1).message.content).toEqual([{ type: "text", text: "Second answer." }]);
      expect(standin.requests.length).toBe(2);
      const history = JSON.stringify(standin.requests[1]!.messages);
      expect(history).toContain("First question");
      expect(history).toContain("First answer.");
      expect(history).toContain("Second question");
    } finally {
      await standin.stop();
    }
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------
// Claude Code
// ---------------------------------------------------------------------------------------------

interface ClaudeSetup {
  dir: string;
  cwd: string;
  env: Record<string, string>;
  standin: Standin;
}

/** A fresh dir with `proj/` (the cwd); `script` may be built from the cwd's absolute path. */
function claudeSetup(script: Reply[] | ((cwd: string) => Reply[])): ClaudeSetup {
  const dir = tempDir("agentport-claude-");
  const cwd = join(dir, "proj");
  mkdirSync(cwd);
  const standin = startAnthropicStandin(typeof script === "function" ? script(cwd) : script);
  const env = { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin", ...claudeEnv(dir, standin.url) };
  return { dir, cwd, env, standin };
}

const runClaude = (s: ClaudeSetup, args: string[], prompt: string, cwd = s.cwd) =>
  spawnCollect([CLAUDE, "-p", "--output-format", "stream-json", "--verbose", ...args], {
    cwd,
    env: s.env,
    stdin: prompt,
    timeoutMs: 45_000,
  });

const resultOf = (r: Spawned) => r.records.filter((x) => x.type === "result").at(-1);

describe("Claude Code 2.1.197 against the Anthropic stand-in", () => {
  test("(a) text: result success with the text, exit 0, our session id", async () => {
    const s = claudeSetup([{ text: "Hello from the stand-in." }]);
    try {
      const sid = crypto.randomUUID();
      const r = await runClaude(s, ["--session-id", sid], "Say hello");
      note("claude (a) text", r, s.standin);
      expect(r.timedOut).toBe(false);
      expect(r.code).toBe(0);
      const init = r.records.find((x) => x.type === "system" && x.subtype === "init");
      expect(init).toMatchObject({ session_id: sid, cwd: s.cwd, apiKeySource: "ANTHROPIC_API_KEY" });
      expect(resultOf(r)).toMatchObject({
        subtype: "success",
        is_error: false,
        result: "Hello from the stand-in.",
        session_id: sid,
        num_turns: 1,
        stop_reason: "end_turn",
      });
      expect(resultOf(r).total_cost_usd).toBeGreaterThan(0);
      expect(s.standin.requests.length).toBe(1);
      expect(s.standin.requests[0]).toMatchObject({ stream: true });
      const posts = s.standin.log.filter((l) => l.method === "POST");
      expect(posts.map((p) => p.path + p.query)).toEqual(["/v1/messages?beta=true"]);
      expect(posts[0]!.headers["x-claude-code-session-id"]).toBe(sid);
      expect(s.standin.log.every((l) => l.method === "POST" || (l.method === "HEAD" && l.path === "/"))).toBe(true);
    } finally {
      await s.standin.stop();
    }
  }, 60_000);

  test("(b) tool call: Read a file, then text", async () => {
    const s = claudeSetup((cwd) => [
      { text: "Reading it.", toolCall: { name: "Read", arguments: { file_path: join(cwd, "notes.txt") } } },
      { text: "The file says hi." },
    ]);
    const file = join(s.cwd, "notes.txt");
    writeFileSync(file, "hi from notes\n");
    const standin = s.standin;
    try {
      const r = await runClaude(s, ["--session-id", crypto.randomUUID()], "Read notes.txt");
      note("claude (b) tool", r, standin);
      expect(r.code).toBe(0);
      const toolUse = r.records.flatMap((x) => (x.type === "assistant" ? x.message.content : [])).find((c: any) => c.type === "tool_use");
      expect(toolUse).toMatchObject({ name: "Read", input: { file_path: file } });
      const user = r.records.find((x) => x.type === "user");
      expect(user.message.content[0]).toMatchObject({ type: "tool_result", tool_use_id: toolUse.id });
      expect(user.message.content[0].is_error ?? false).toBe(false);
      expect(user.tool_use_result).toMatchObject({ type: "text", file: { filePath: file } });
      expect(user.tool_use_result.file.content).toContain("hi from notes");
      expect(resultOf(r)).toMatchObject({
        subtype: "success",
        is_error: false,
        result: "The file says hi.",
        num_turns: 2,
        permission_denials: [],
      });
      expect(standin.requests.length).toBe(2);
      expect(JSON.stringify(standin.requests[1]!.messages)).toContain("hi from notes");
    } finally {
      await standin.stop();
    }
  }, 60_000);

  test("(c) 500 always: system/api_retry records, result is_error, exit 1", async () => {
    const s = claudeSetup([{ status: 500, body: "Internal server error" }]);
    try {
      const r = await runClaude(s, ["--session-id", crypto.randomUUID()], "Say hello");
      note("claude (c) 500 always", r, s.standin);
      expect(r.code).toBe(1);
      const retries = r.records.filter((x) => x.type === "system" && x.subtype === "api_retry");
      expect(retries.map((x) => [x.attempt, x.max_retries, x.error_status, x.error])).toEqual([
        [1, 2, 500, "server_error"],
        [2, 2, 500, "server_error"],
      ]);
      const synthetic = r.records.find((x) => x.type === "assistant" && x.message?.model === "<synthetic>");
      expect(synthetic).toBeDefined();
      const res = resultOf(r);
      expect(res).toMatchObject({ subtype: "success", is_error: true, api_error_status: 500, total_cost_usd: 0 });
      expect(res.result).toContain("500");
      expect(s.standin.requests.length).toBe(3); // 1 + CLAUDE_CODE_MAX_RETRIES=2
    } finally {
      await s.standin.stop();
    }
  }, 60_000);

  test("(d) permission denial: Bash `touch x` in default mode lands in result.permission_denials", async () => {
    const s = claudeSetup([
      { text: "I'll create the file.", toolCall: { name: "Bash", arguments: { command: "touch x", description: "Create a file" } } },
      { text: "The command was not permitted." },
    ]);
    try {
      const r = await runClaude(s, ["--session-id", crypto.randomUUID()], "Create a file named x");
      note("claude (d) permission denial", r, s.standin);
      expect(r.code).toBe(0);
      const res = resultOf(r);
      expect(res).toMatchObject({ subtype: "success", is_error: false, result: "The command was not permitted." });
      expect(res.permission_denials).toEqual([
        { tool_name: "Bash", tool_use_id: "toolu_standin_0001", tool_input: { command: "touch x", description: "Create a file" } },
      ]);
      const user = r.records.find((x) => x.type === "user");
      expect(user.message.content[0]).toMatchObject({ type: "tool_result", is_error: true, tool_use_id: "toolu_standin_0001" });
      // Plain -p never prints system/permission_denied.
      expect(r.records.some((x) => x.type === "system" && x.subtype === "permission_denied")).toBe(false);
      expect(existsSync(join(s.cwd, "x"))).toBe(false);
      expect(s.standin.requests.length).toBe(2);
    } finally {
      await s.standin.stop();
    }
  }, 60_000);

  test("(e) --resume <id> works in the birth folder and fails elsewhere with 'No conversation found'", async () => {
    const s = claudeSetup([{ text: "First answer." }, { text: "Second answer." }]);
    try {
      const sid = crypto.randomUUID();
      const first = await runClaude(s, ["--session-id", sid], "First question");
      note("claude (e) first run", first, s.standin);
      expect(first.code).toBe(0);
      expect(resultOf(first)).toMatchObject({ is_error: false, session_id: sid });

      const again = await runClaude(s, ["--resume", sid], "Second question");
      note("claude (e) resume, birth folder", again, s.standin);
      expect(again.code).toBe(0);
      expect(resultOf(again)).toMatchObject({ is_error: false, session_id: sid, result: "Second answer." });
      // Old history is not re-printed on stdout, but it is sent to the API.
      const texts = again.records.filter((x) => x.type === "assistant").flatMap((x) => x.message.content.map((c: any) => c.text));
      expect(texts).toEqual(["Second answer."]);
      expect(s.standin.requests.length).toBe(2);
      const history = JSON.stringify(s.standin.requests[1]!.messages);
      expect(history).toContain("First question");
      expect(history).toContain("First answer.");
      expect(history).toContain("Second question");

      const elsewhere = join(s.dir, "other");
      mkdirSync(elsewhere);
      const other = await runClaude(s, ["--resume", sid], "Third question", elsewhere);
      note("claude (e) resume, other folder", other, s.standin);
      expect(other.code).toBe(1);
      expect(other.stderr).toContain(`No conversation found with session ID: ${sid}`);
      const res = resultOf(other);
      expect(res).toMatchObject({ subtype: "error_during_execution", is_error: true });
      expect(JSON.stringify(res.errors)).toContain(sid);
      expect(s.standin.requests.length).toBe(2); // no API call for the failed resume
    } finally {
      await s.standin.stop();
    }
  }, 60_000);
});
