// The fake pi as real processes: the compiled binary through a symlink named
// `fake-pi`, compared with what pi 0.73.1 was captured doing
// (/work/shared/fixtures/pi, summarized below), in both dialects. Every run
// gets its own HOME and PI_CODING_AGENT_DIR under a temp dir, never the real ones.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, tempDir } from "./helpers.ts";

type Json = Record<string, any>;

let fake: string;
const made: string[] = [];

beforeAll(() => {
  const dir = tempDir("agentport-fake-pi-");
  made.push(dir);
  fake = join(dir, "fake-pi");
  symlinkSync(BIN, fake);
});

afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

interface Box {
  root: string;
  home: string;
  agent: string;
  proj: string;
}

/** A fresh world: HOME, pi's agent dir, a project folder. */
function box(): Box {
  const root = realpathSync(tempDir("agentport-pi-box-"));
  made.push(root);
  const b = { root, home: join(root, "home"), agent: join(root, "agent"), proj: join(root, "proj") };
  for (const d of [b.home, b.agent, b.proj]) mkdirSync(d, { recursive: true });
  return b;
}

interface Opts {
  box: Box;
  cwd?: string;
  scenario?: string | Json;
  dialect?: "0.73.1" | "0.85";
  env?: Record<string, string>;
  stdin?: string;
}

function spawnPi(args: string[], o: Opts) {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: o.box.home,
    PI_CODING_AGENT_DIR: o.box.agent,
    NO_COLOR: "1",
    ...o.env,
  };
  if (o.scenario !== undefined) env.AGENTPORT_FAKE_SCENARIO = typeof o.scenario === "string" ? o.scenario : JSON.stringify(o.scenario);
  if (o.dialect) env.AGENTPORT_FAKE_PI_DIALECT = o.dialect;
  return Bun.spawn([fake, ...args], {
    cwd: o.cwd ?? o.box.proj,
    env,
    stdin: o.stdin === undefined ? "ignore" : new TextEncoder().encode(o.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
}

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
  lines: Json[];
}

async function pi(args: string[], o: Opts): Promise<Ran> {
  const proc = spawnPi(args, o);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const lines: Json[] = [];
  for (const l of stdout.split("\n")) {
    try {
      lines.push(JSON.parse(l) as Json);
    } catch {
      // blank, or a raw step's line
    }
  }
  return { code, stdout, stderr, lines };
}

/** Read a live process's stdout until a line satisfies `until`. */
async function readUntil(proc: ReturnType<typeof spawnPi>, until: (line: Json) => boolean, timeoutMs = 5000): Promise<Json[]> {
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  const lines: Json[] = [];
  let buf = "";
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stdout ended before the awaited line: ${JSON.stringify(lines.map((l) => l.type))}`);
      buf += decoder.decode(value, { stream: true });
      let nl = buf.indexOf("\n");
      while (nl >= 0) {
        const line = JSON.parse(buf.slice(0, nl)) as Json;
        buf = buf.slice(nl + 1);
        lines.push(line);
        if (until(line)) return lines;
        nl = buf.indexOf("\n");
      }
    }
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
  }
}

/** The event names the capture summaries use (fixtures/pi/*-summary.json), runs of the same name folded into "name xN". */
function summarize(lines: Json[]): string[] {
  const names = lines.map((l) => {
    if (l.type === "message_start" || l.type === "message_end") return `${l.type}(${l.message.role})`;
    if (l.type === "message_update") return `message_update:${l.assistantMessageEvent.type}`;
    return String(l.type);
  });
  const out: string[] = [];
  for (let i = 0; i < names.length; ) {
    let j = i;
    while (j < names.length && names[j] === names[i]) j++;
    out.push(j - i > 1 ? `${names[i]} x${j - i}` : String(names[i]));
    i = j;
  }
  return out;
}

const lastAssistant = (lines: Json[]): Json =>
  lines.filter((l) => l.type === "message_end" && l.message.role === "assistant").at(-1)?.message;

function sessionFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith(".jsonl")) out.push(join(d, e.name));
    }
  };
  walk(dir);
  return out;
}

const fileLines = (path: string): string[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim());

const JSON_ARGS = ["-p", "--mode", "json", "--provider", "standin", "--model", "standin-model"];

// The captured event sequences of pi 0.73.1 (fixtures/pi/{a,b,c}-summary.json).
const START = ["session", "agent_start", "turn_start", "message_start(user)", "message_end(user)"];
const TEXT_MSG = [
  "message_start(assistant)",
  "message_update:text_start",
  "message_update:text_delta x3",
  "message_update:text_end",
  "message_end(assistant)",
];
const TOOL_MSG = [
  "message_start(assistant)",
  "message_update:toolcall_start",
  "message_update:toolcall_delta x3",
  "message_update:toolcall_end",
  "message_end(assistant)",
];
const RESULT = ["message_start(toolResult)", "message_end(toolResult)"];
const FAILED = ["message_start(assistant)", "message_end(assistant)", "turn_end", "agent_end"];
const RETRY = ["auto_retry_start", "agent_start", "turn_start"];
const CAPTURED: Record<string, string[]> = {
  a1: [...START, ...TEXT_MSG, "turn_end", "agent_end"],
  b1: [
    ...START,
    ...TOOL_MSG,
    "tool_execution_start",
    "tool_execution_end",
    ...RESULT,
    "turn_end",
    "turn_start",
    ...TEXT_MSG,
    "turn_end",
    "agent_end",
  ],
  b2: [
    ...START,
    ...TOOL_MSG,
    "tool_execution_start",
    "tool_execution_update x2",
    "tool_execution_end",
    ...RESULT,
    "turn_end",
    "turn_start",
    ...TEXT_MSG,
    "turn_end",
    "agent_end",
  ],
  b3: [
    ...START,
    "message_start(assistant)",
    "message_update:text_start",
    "message_update:text_delta x3",
    "message_update:toolcall_start",
    "message_update:toolcall_delta x3",
    "message_update:toolcall_start",
    "message_update:toolcall_delta x3",
    "message_update:text_end",
    "message_update:toolcall_end x2",
    "message_end(assistant)",
    "tool_execution_start x2",
    "tool_execution_update x2",
    "tool_execution_end x2",
    ...RESULT,
    ...RESULT,
    "turn_end",
    "turn_start",
    ...TEXT_MSG,
    "turn_end",
    "agent_end",
  ],
  b4: [
    ...START,
    ...TOOL_MSG,
    "tool_execution_start",
    "tool_execution_end",
    ...RESULT,
    "turn_end",
    "turn_start",
    ...TEXT_MSG,
    "turn_end",
    "agent_end",
  ],
  c1: [...START, ...FAILED, ...RETRY, ...FAILED, ...RETRY, ...FAILED, ...RETRY, ...FAILED, "auto_retry_end"],
  c2: [...START, ...FAILED, ...RETRY, ...TEXT_MSG, "auto_retry_end", "turn_end", "agent_end"],
  c4: [...START, ...FAILED],
};

const read = { tool: { name: "read", args: { path: "hello.txt" }, result: "hi from hello.txt\n" } };
const bash = { tool: { name: "bash", args: { command: "echo hi from bash" }, result: "hi from bash\n" } };

describe("fake pi: the stream has the captured shapes", () => {
  test.each([
    ["a1", "text", []],
    ["b1", { steps: [read, { text: "The file says hi." }] }, []],
    ["b2", { steps: [bash, { text: "It printed hi." }] }, []],
    ["b3", { steps: [{ text: "Let me look." }, read, { tool: { ...bash.tool, parallel: true } }, { text: "Both done." }] }, []],
    ["b4", "tool-not-enabled", ["--tools", "read"]],
    ["c1", "error-500", []],
    ["c2", "error-429-then-ok", []],
    ["c4", "error-400", []],
  ] as [string, string | Json, string[]][])("%s", async (name, scenario, extra) => {
    const b = box();
    const ran = await pi([...JSON_ARGS, ...extra, "Do the thing"], { box: b, scenario });
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0); // json mode exits 0 even when the run failed
    expect(summarize(ran.lines)).toEqual(CAPTURED[name] ?? []);
  });

  test("header, assistant message and usage have pi's keys; default usage 100/20, $0.00045", async () => {
    const b = box();
    const ran = await pi([...JSON_ARGS, "Say hello"], { box: b, scenario: "text" });
    const header = ran.lines[0] as Json;
    expect(Object.keys(header)).toEqual(["type", "version", "id", "timestamp", "cwd"]);
    expect(header).toMatchObject({ type: "session", version: 3, cwd: b.proj });
    expect(header.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const message = lastAssistant(ran.lines);
    expect(Object.keys(message)).toEqual(["role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp", "responseId"]);
    expect(message).toMatchObject({
      role: "assistant",
      api: "openai-completions",
      provider: "standin",
      model: "standin-model",
      stopReason: "stop",
    });
    expect(message.content).toEqual([{ type: "text", text: "Hello from the fake pi." }]);
    expect(message.usage).toEqual({
      input: 100,
      output: 20,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 120,
      cost: { input: 0.00015, output: 0.0003, cacheRead: 0, cacheWrite: 0, total: 0.00045 },
    });
    const update = ran.lines.find((l) => l.type === "message_update") as Json;
    expect(Object.keys(update)).toEqual(["type", "assistantMessageEvent", "message"]);
    expect(update.assistantMessageEvent.partial).toEqual(update.message);
    const end = ran.lines.at(-1) as Json;
    expect(end.type).toBe("agent_end");
    expect(end.messages.map((m: Json) => m.role)).toEqual(["user", "assistant"]);
  });

  test("usage per message is configurable", async () => {
    const b = box();
    const ran = await pi([...JSON_ARGS, "hi"], {
      box: b,
      scenario: { steps: [{ text: "x", usage: { input: 1000, output: 10, cacheRead: 50, cost: 0.01 } }] },
    });
    expect(lastAssistant(ran.lines).usage).toMatchObject({
      input: 1000,
      output: 10,
      cacheRead: 50,
      totalTokens: 1060,
      cost: { total: 0.01 },
    });
  });

  test("retries: auto_retry_start after each failed agent_end, final auto_retry_end{success:false}", async () => {
    const b = box();
    const ran = await pi([...JSON_ARGS, "This will fail"], { box: b, scenario: "error-500" });
    const starts = ran.lines.filter((l) => l.type === "auto_retry_start");
    expect(starts.map((s) => [s.attempt, s.maxAttempts, s.delayMs, s.errorMessage])).toEqual([
      [1, 3, 2000, "500 standin error 500"],
      [2, 3, 4000, "500 standin error 500"],
      [3, 3, 8000, "500 standin error 500"],
    ]);
    expect(ran.lines.at(-1)).toEqual({ type: "auto_retry_end", success: false, attempt: 3, finalError: "500 standin error 500" });
    const failed = lastAssistant(ran.lines);
    expect(failed).toMatchObject({ stopReason: "error", errorMessage: "500 standin error 500", content: [] });
    expect(failed.usage.totalTokens).toBe(0);
    // Retry attempts run through continue(): their agent_end holds only the new message.
    const ends = ran.lines.filter((l) => l.type === "agent_end");
    expect(ends.map((e) => e.messages.length)).toEqual([2, 1, 1, 1]);
  });

  test("retries follow settings.json (maxRetries, enabled)", async () => {
    const b = box();
    writeFileSync(join(b.agent, "settings.json"), JSON.stringify({ retry: { maxRetries: 1, baseDelayMs: 10 } }));
    let ran = await pi([...JSON_ARGS, "x"], { box: b, scenario: "error-500" });
    expect(ran.lines.filter((l) => l.type === "auto_retry_start").map((l) => l.delayMs)).toEqual([10]);
    expect(ran.lines.at(-1)).toMatchObject({ type: "auto_retry_end", success: false, attempt: 1 });
    writeFileSync(join(b.agent, "settings.json"), JSON.stringify({ retry: { enabled: false } }));
    ran = await pi([...JSON_ARGS, "x"], { box: b, scenario: "error-429-then-ok" });
    expect(summarize(ran.lines)).toEqual(CAPTURED.c4 ?? []);
  });

  test("429 then ok: auto_retry_end{success:true} between the good message_end and its turn_end", async () => {
    const b = box();
    const ran = await pi([...JSON_ARGS, "x"], { box: b, scenario: "error-429-then-ok" });
    const i = ran.lines.findIndex((l) => l.type === "auto_retry_end");
    expect(ran.lines[i]).toEqual({ type: "auto_retry_end", success: true, attempt: 1 });
    expect(ran.lines[i - 1]).toMatchObject({ type: "message_end", message: { role: "assistant", stopReason: "stop" } });
    expect(ran.lines[i + 1]?.type).toBe("turn_end");
  });

  test("400 is not retried", async () => {
    const b = box();
    const ran = await pi([...JSON_ARGS, "Bad request"], { box: b, scenario: "error-400" });
    expect(ran.lines.some((l) => l.type.startsWith("auto_retry"))).toBe(false);
    expect(lastAssistant(ran.lines)).toMatchObject({ stopReason: "error", errorMessage: "400 standin bad request" });
  });

  test("a tool that --tools leaves out: isError, 'Tool bash not found', the run goes on (b4)", async () => {
    const b = box();
    const ran = await pi([...JSON_ARGS, "--tools", "read", "run it"], { box: b, scenario: "tool-not-enabled" });
    const end = ran.lines.find((l) => l.type === "tool_execution_end") as Json;
    expect(end).toEqual({
      type: "tool_execution_end",
      toolCallId: end.toolCallId,
      toolName: "bash",
      result: { content: [{ type: "text", text: "Tool bash not found" }], details: {} },
      isError: true,
    });
    // grep/find/ls are off unless --tools names them.
    const grep = await pi([...JSON_ARGS, "x"], {
      box: b,
      scenario: { steps: [{ tool: { name: "grep", args: { pattern: "x" } } }, { text: "ok" }] },
    });
    expect(grep.lines.find((l) => l.type === "tool_execution_end")?.result.content[0].text).toBe("Tool grep not found");
  });

  test("the prompt appears on stdout only inside user messages", async () => {
    const b = box();
    const prompt = "PROMPT-MARKER-91";
    const ran = await pi([...JSON_ARGS, prompt], { box: b, scenario: "tools" });
    const carrying = ran.stdout.split("\n").filter((l) => l.includes(prompt));
    expect(carrying.map((l) => JSON.parse(l).type)).toEqual(["message_start", "message_end", "agent_end"]);
    expect(ran.stderr).not.toContain(prompt);
  });
});

describe("fake pi: flags and input", () => {
  test.each(["--session-id", "--approve", "--"])("0.73.1 rejects %s: 'Error: Unknown option', exit 1", async (flag) => {
    const b = box();
    const args = flag === "--session-id" ? [flag, "0199aaaa-0000-7000-8000-000000000000"] : [flag];
    const ran = await pi([...JSON_ARGS, ...args, "prompt"], { box: b });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toBe(`Error: Unknown option: ${flag}\n`);
    expect(ran.stdout).toBe("");
  });

  test("0.73.1: any unknown long option, a prompt starting with '-' (g12), an unknown short option (h4)", async () => {
    const b = box();
    let ran = await pi([...JSON_ARGS, "--frobnicate", "prompt"], { box: b });
    expect([ran.code, ran.stderr]).toEqual([1, "Error: Unknown option: --frobnicate\n"]);
    ran = await pi([...JSON_ARGS, "--no-session", "-starts with a dash"], { box: b });
    expect([ran.code, ran.stderr, ran.stdout]).toEqual([1, "Error: Unknown option: -starts with a dash\n", ""]);
    ran = await pi(["-x", "hello"], { box: b });
    expect([ran.code, ran.stderr]).toEqual([1, "Error: Unknown option: -x\n"]);
    // The same prompt works on stdin.
    ran = await pi([...JSON_ARGS, "--no-session"], { box: b, stdin: "-starts with a dash" });
    expect(ran.code).toBe(0);
    expect(ran.lines[3]?.message.content[0].text).toBe("-starts with a dash");
  });

  test("0.73.1 accepts the isolation flags (g9) and warns on a bogus thinking level (g10)", async () => {
    const b = box();
    const flags = [
      "--no-skills",
      "--no-prompt-templates",
      "--no-context-files",
      "--no-extensions",
      "--offline",
      "--tools",
      "read,bash",
      "--thinking",
      "high",
      "--no-session",
    ];
    let ran = await pi([...JSON_ARGS, ...flags, "flags test"], { box: b });
    expect([ran.code, ran.stderr]).toEqual([0, ""]);
    ran = await pi([...JSON_ARGS, "--thinking", "bogus", "--no-session", "x"], { box: b });
    expect(ran.code).toBe(0);
    expect(ran.stderr).toBe('Warning: Invalid thinking level "bogus". Valid values: off, minimal, low, medium, high, xhigh\n');
  });

  test.each([
    ["0.73.1", "0.73.1"],
    ["0.85", "0.85.0"],
  ] as const)("%s: --version prints %s on stderr, nothing on stdout", async (dialect, version) => {
    const ran = await pi(["--version"], { box: box(), dialect });
    expect([ran.code, ran.stdout, ran.stderr]).toEqual([0, "", `${version}\n`]);
  });

  test("--help on stderr: the probe finds the isolation flags; only 0.85 lists --session-id and --approve", async () => {
    const old = await pi(["--help"], { box: box() });
    expect([old.code, old.stdout]).toEqual([0, ""]);
    for (const flag of [
      "--session-dir",
      "--no-skills",
      "--no-prompt-templates",
      "--no-context-files",
      "--tools",
      "--thinking",
      "--offline",
      "--session ",
    ]) {
      expect(old.stderr).toContain(flag);
    }
    expect(old.stderr).not.toContain("--session-id");
    expect(old.stderr).not.toContain("--approve");
    const seed = await pi(["--help"], { box: box(), dialect: "0.85" });
    expect(seed.code).toBe(0);
    expect(seed.stderr).toContain("--session-id");
    expect(seed.stderr).toContain("--approve");
  });

  test("0.85: --approve, --session-id and `--` then the prompt on stdin (the seed's argv)", async () => {
    const b = box();
    const id = "0199aaaa-1111-7000-8000-000000000001";
    const args = [
      "-p",
      "--mode",
      "json",
      "--approve",
      "--session-id",
      id,
      "--session-dir",
      join(b.root, "sessions"),
      "--model",
      "standin/standin-model",
      "--",
    ];
    const ran = await pi(args, { box: b, dialect: "0.85", stdin: "--looks-like-a-flag please" });
    expect(ran.code).toBe(0);
    expect(ran.lines[0]).toMatchObject({ type: "session", id });
    expect(ran.lines[3]?.message.content[0].text).toBe("--looks-like-a-flag please");
    expect(lastAssistant(ran.lines).stopReason).toBe("stop");
    // After `--` even a dash prompt in argv is a message.
    const dash = await pi(["-p", "--no-session", "--", "-dash prompt"], { box: b, dialect: "0.85" });
    expect([dash.code, dash.stdout]).toEqual([0, "Hello from the fake pi.\n"]);
  });

  test("stdin is read to EOF and joined to the first argv message with no separator (g7)", async () => {
    const b = box();
    const ran = await pi([...JSON_ARGS, "ARGV-PART"], { box: b, stdin: "STDIN-PART\n" });
    expect(ran.lines[3]?.message.content).toEqual([{ type: "text", text: "STDIN-PARTARGV-PART" }]);
  });

  test("@file text joins the prompt between stdin and the first message; a missing file exits 1", async () => {
    const b = box();
    writeFileSync(join(b.proj, "notes.md"), "NOTES");
    const ran = await pi([...JSON_ARGS, "--no-session", "@notes.md", "ARGV"], { box: b, stdin: "STDIN" });
    expect(ran.lines[3]?.message.content[0].text).toBe(`STDIN<file name="${join(b.proj, "notes.md")}">\nNOTES\n</file>\nARGV`);
    const missing = await pi([...JSON_ARGS, "--no-session", "@nope.md", "x"], { box: b });
    expect([missing.code, missing.stderr]).toEqual([1, `Error: File not found: ${join(b.proj, "nope.md")}\n`]);
  });

  test("--mode json alone is print mode (g1); several argv messages run one after the other (g8)", async () => {
    const b = box();
    const g1 = await pi(["--mode", "json", "--no-session"], { box: b, stdin: "prompt from stdin, no -p" });
    expect(g1.lines[3]?.message.content[0].text).toBe("prompt from stdin, no -p");
    const g8 = await pi([...JSON_ARGS, "first message", "second message"], { box: b });
    expect(g8.lines.filter((l) => l.type === "agent_start")).toHaveLength(2);
    expect(g8.lines.filter((l) => l.type === "message_end" && l.message.role === "user").map((l) => l.message.content[0].text)).toEqual([
      "first message",
      "second message",
    ]);
  });

  test("no prompt at all: the header line only, exit 0, no session file (g5); text -p prints nothing (g4)", async () => {
    const b = box();
    const ran = await pi(JSON_ARGS, { box: b });
    expect(ran.code).toBe(0);
    expect(ran.lines.map((l) => l.type)).toEqual(["session"]);
    expect(sessionFiles(b.agent)).toEqual([]);
    const text = await pi(["-p"], { box: b });
    expect([text.code, text.stdout]).toEqual([0, ""]);
    const ignored = await pi([...JSON_ARGS, "a prompt that never runs"], { box: b, scenario: "no-prompt" });
    expect([ignored.code, ignored.lines.length]).toEqual([0, 1]);
  });

  test("text -p: the answer on stdout; a failed run exits 1 with the error on stderr (c3)", async () => {
    const b = box();
    const ok = await pi(["-p", "--no-session", "hi"], { box: b });
    expect([ok.code, ok.stdout, ok.stderr]).toEqual([0, "Hello from the fake pi.\n", ""]);
    const bad = await pi(["-p", "--no-session", "hi"], { box: b, scenario: "error-400" });
    expect([bad.code, bad.stdout, bad.stderr]).toEqual([1, "", "400 standin bad request\n"]);
  });

  test("--model provider/id sets the observed model; the wrong-model scenario overrides it", async () => {
    const b = box();
    const own = await pi(["--mode", "json", "--no-session", "--model", "acme/big-1:high", "x"], { box: b });
    expect(lastAssistant(own.lines)).toMatchObject({ provider: "acme", model: "big-1" });
    const wrong = await pi([...JSON_ARGS, "--no-session", "x"], { box: b, scenario: "wrong-model" });
    expect(lastAssistant(wrong.lines)).toMatchObject({ provider: "standin", model: "other-model" });
  });

  test("a bad scenario fails loudly with exit 2", async () => {
    const ran = await pi([...JSON_ARGS, "x"], { box: box(), scenario: { steps: [{ txet: "typo" }] } });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toStartWith("fake-pi: scenario");
  });
});

describe("fake pi: sessions", () => {
  test("a new session: file <session-dir>/<ISO with - >_<id>.jsonl, or pi's per-cwd default dir", async () => {
    const b = box();
    const dir = join(b.root, "sessions");
    const ran = await pi([...JSON_ARGS, "--session-dir", dir, "hi"], { box: b });
    const header = ran.lines[0] as Json;
    const files = readdirSync(dir);
    expect(files).toEqual([`${String(header.timestamp).replace(/[:.]/g, "-")}_${header.id}.jsonl`]);
    const lines = fileLines(join(dir, files[0] ?? ""));
    expect(lines[0]).toBe(JSON.stringify(header));
    expect(lines.slice(1).map((l) => JSON.parse(l).type)).toEqual(["model_change", "thinking_level_change", "message", "message"]);
    expect(JSON.parse(lines[1] ?? "{}")).toMatchObject({
      type: "model_change",
      parentId: null,
      provider: "standin",
      modelId: "standin-model",
    });
    const byEnv = await pi([...JSON_ARGS, "hi"], { box: b, env: { PI_CODING_AGENT_SESSION_DIR: join(b.root, "env-sessions") } });
    expect(readdirSync(join(b.root, "env-sessions"))).toHaveLength(1);
    expect(byEnv.code).toBe(0);
    await pi([...JSON_ARGS, "hi"], { box: b });
    const encoded = `--${b.proj.slice(1).replace(/\//g, "-")}--`;
    expect(readdirSync(join(b.agent, "sessions", encoded))).toHaveLength(1);
  });

  test("--no-session: the header is printed, nothing is written", async () => {
    const b = box();
    const ran = await pi([...JSON_ARGS, "--no-session", "hi"], { box: b });
    expect(ran.lines[0]?.type).toBe("session");
    expect(sessionFiles(b.root)).toEqual([]);
  });

  test("a pre-written header: pi takes its id, runs in its cwd, and writes the header a second time", async () => {
    const b = box();
    const birth = join(b.root, "projA");
    const elsewhere = join(b.root, "projB");
    mkdirSync(birth);
    mkdirSync(elsewhere);
    const file = join(b.root, "sessions", "chosen.jsonl");
    mkdirSync(join(b.root, "sessions"));
    const header = {
      type: "session",
      version: 3,
      id: "0199bbbb-2222-7000-8000-000000000002",
      timestamp: "2026-01-02T03:04:05.000Z",
      cwd: birth,
    };
    writeFileSync(file, `${JSON.stringify(header)}\n`);
    const scenario = { steps: [{ tool: { name: "bash", args: { command: "pwd" }, result: "${cwd}\n" } }, { text: "There." }] };
    const ran = await pi([...JSON_ARGS, "--session", file, "where are you?"], { box: b, cwd: elsewhere, scenario });
    expect(ran.code).toBe(0);
    expect(ran.lines[0]).toEqual(header);
    expect(ran.lines.find((l) => l.type === "tool_execution_end")?.result.content[0].text).toBe(`${birth}\n`);
    let lines = fileLines(file);
    expect(lines[0]).toBe(JSON.stringify(header));
    expect(lines[1]).toBe(JSON.stringify(header));
    expect(lines.slice(2).map((l) => JSON.parse(l).type)).toEqual([
      "model_change",
      "thinking_level_change",
      "message",
      "message",
      "message",
      "message",
    ]);
    // Resumed: only the new messages, appended; agent_end holds only this run's messages.
    const again = await pi([...JSON_ARGS, "--session", file, "and now?"], { box: b, cwd: elsewhere });
    expect(again.lines[0]).toEqual(header);
    expect(again.lines.at(-1)?.messages).toHaveLength(2);
    lines = fileLines(file);
    expect(lines.filter((l) => JSON.parse(l).type === "session")).toHaveLength(2);
    expect(lines).toHaveLength(10);
  });

  test("--session <path that does not exist>: a new session with a fresh id at that path (f7)", async () => {
    const b = box();
    const file = join(b.root, "new", "s.jsonl");
    const ran = await pi([...JSON_ARGS, "--session", file, "hi"], { box: b });
    const lines = fileLines(file);
    expect(JSON.parse(lines[0] ?? "{}")).toEqual(ran.lines[0] as Json);
    expect(lines.filter((l) => JSON.parse(l).type === "session")).toHaveLength(1);
  });

  test("the session file appears only after the first assistant message", async () => {
    const b = box();
    const dir = join(b.root, "sessions");
    const waiting = spawnPi([...JSON_ARGS, "--session-dir", dir, "hi"], { box: b, scenario: { steps: [{ hang: true }] } });
    await readUntil(waiting, (l) => l.type === "message_end" && l.message.role === "user");
    await Bun.sleep(100);
    expect(sessionFiles(dir)).toEqual([]);
    waiting.kill("SIGTERM");
    expect(await waiting.exited).toBe(143);

    const answered = spawnPi([...JSON_ARGS, "--session-dir", dir, "hi"], {
      box: b,
      scenario: { steps: [{ text: "first" }, { hang: true }] },
    });
    await readUntil(answered, (l) => l.type === "message_end" && l.message.role === "assistant");
    // The file is appended right after message_end went to stdout: give it a moment.
    const written = () => sessionFiles(dir).flatMap((f) => fileLines(f).map((l) => JSON.parse(l).type));
    for (let i = 0; i < 40 && written().length < 5; i++) await Bun.sleep(50);
    expect(sessionFiles(dir)).toHaveLength(1);
    expect(written()).toEqual(["session", "model_change", "thinking_level_change", "message", "message"]);
    answered.kill("SIGTERM");
    expect(await answered.exited).toBe(143);
  });

  test("--session <id prefix>: found in the session dir, runs in the header's cwd; elsewhere 'No session found', exit 1", async () => {
    const b = box();
    const dir = join(b.root, "sessions");
    const birth = join(b.root, "projA");
    mkdirSync(birth);
    const first = await pi([...JSON_ARGS, "--session-dir", dir, "hi"], { box: b, cwd: birth });
    const id = String(first.lines[0]?.id);
    const scenario = { steps: [{ tool: { name: "bash", args: { command: "pwd" }, result: "${cwd}" } }, { text: "ok" }] };
    const resumed = await pi([...JSON_ARGS, "--session-dir", dir, "--session", id.slice(0, 13), "again"], { box: b, scenario });
    expect(resumed.code).toBe(0);
    expect(resumed.lines[0]).toEqual(first.lines[0] as Json);
    expect(resumed.lines.find((l) => l.type === "tool_execution_end")?.result.content[0].text).toBe(birth);
    expect(readdirSync(dir)).toHaveLength(1);
    const lines = fileLines(join(dir, readdirSync(dir)[0] ?? ""));
    expect(lines.filter((l) => JSON.parse(l).type === "session")).toHaveLength(1);
    expect(lines.filter((l) => JSON.parse(l).type === "message")).toHaveLength(6);
    const missing = await pi([...JSON_ARGS, "--session-dir", join(b.root, "other"), "--session", id, "again"], { box: b });
    expect([missing.code, missing.stdout, missing.stderr]).toEqual([1, "", `No session found matching '${id}'\n`]);
  });

  test("--session <id> from another project's default folder: pi asks to fork on stderr; EOF exits 0 silently, y forks (f6, g13)", async () => {
    const b = box();
    const projA = join(b.root, "projA");
    mkdirSync(projA);
    const first = await pi([...JSON_ARGS, "hi"], { box: b, cwd: projA });
    const id = String(first.lines[0]?.id);
    const question = `Session found in different project: ${projA}\nFork this session into current directory? [y/N] `;
    const eof = await pi([...JSON_ARGS, "--session", id, "prompt"], { box: b });
    expect([eof.code, eof.stdout, eof.stderr]).toEqual([0, "", question]);
    const no = await pi([...JSON_ARGS, "--session", id, "prompt"], { box: b, stdin: "n\n" });
    expect([no.code, no.stdout, no.stderr]).toEqual([0, "", `${question}Aborted.\n`]);
    const yes = await pi([...JSON_ARGS, "--session", id, "prompt after fork"], { box: b, stdin: "y\n" });
    expect(yes.code).toBe(0);
    expect(yes.lines[0]).toMatchObject({ type: "session", cwd: b.proj });
    expect(yes.lines[0]?.id).not.toBe(id);
    expect(String(yes.lines[0]?.parentSession)).toEndWith(`_${id}.jsonl`);
    expect(yes.lines[3]?.message.content[0].text).toBe("prompt after fork");
  });

  test("--continue --session-dir from another folder: the newest session, run in the caller's cwd (f5)", async () => {
    const b = box();
    const dir = join(b.root, "sessions");
    const projA = join(b.root, "projA");
    mkdirSync(projA);
    const first = await pi([...JSON_ARGS, "--session-dir", dir, "hi"], { box: b, cwd: projA });
    const scenario = { steps: [{ tool: { name: "bash", args: { command: "pwd" }, result: "${cwd}" } }, { text: "ok" }] };
    const cont = await pi([...JSON_ARGS, "--continue", "--session-dir", dir, "again"], { box: b, scenario });
    expect(cont.lines[0]).toEqual(first.lines[0] as Json);
    expect(cont.lines.find((l) => l.type === "tool_execution_end")?.result.content[0].text).toBe(b.proj);
  });

  test("0.85 --session-id: names a new session, continues it from the same folder, and (the seed's claim) starts a twin elsewhere", async () => {
    const b = box();
    const dir = join(b.root, "sessions");
    const id = "0199cccc-3333-7000-8000-000000000003";
    const args = [...JSON_ARGS, "--session-dir", dir, "--session-id", id, "hi"];
    const first = await pi(args, { box: b, dialect: "0.85" });
    expect(first.code).toBe(0);
    expect(first.lines[0]).toMatchObject({ id, cwd: b.proj });
    expect(first.stderr).toContain("Warning:");
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toEndWith(`_${id}.jsonl`);
    const again = await pi(args, { box: b, dialect: "0.85" });
    expect(again.lines[0]).toEqual(first.lines[0] as Json);
    expect(again.stderr).toBe("");
    expect(readdirSync(dir)).toHaveLength(1);
    const other = join(b.root, "worktree");
    mkdirSync(other);
    const twin = await pi(args, { box: b, dialect: "0.85", cwd: other });
    expect(twin.lines[0]).toMatchObject({ id, cwd: other });
    expect(readdirSync(dir)).toHaveLength(2);
  });
});

describe("fake pi: envelope and inventory", () => {
  function extension(b: Box, name = "agentport-report"): string {
    const path = join(b.root, `${name}.ts`);
    writeFileSync(path, "export default function () {}\n");
    return path;
  }

  test("0.73.1: -e writes the inventory file; the envelope is report_phase's details; no entry_appended", async () => {
    const b = box();
    const inventory = join(b.root, "inventory.json");
    const ran = await pi([...JSON_ARGS, "-e", extension(b), "-e", extension(b, "guard"), "report"], {
      box: b,
      scenario: "envelope",
      env: { AGENTPORT_INVENTORY_FILE: inventory },
    });
    expect(ran.code).toBe(0);
    expect(JSON.parse(readFileSync(inventory, "utf8"))).toEqual({ pi_version: "0.73.1", extensions: ["agentport-report", "guard"] });
    expect(ran.lines.some((l) => l.type === "entry_appended")).toBe(false);
    const start = ran.lines.find((l) => l.type === "tool_execution_start" && l.toolName === "report_phase") as Json;
    expect(start.args).toEqual({ status: "success", summary: "Read hello.txt.", changed_files: [] });
    const end = ran.lines.find((l) => l.type === "tool_execution_end" && l.toolName === "report_phase") as Json;
    expect(end).toMatchObject({
      isError: false,
      result: {
        content: [{ type: "text", text: "reported" }],
        details: { status: "success", summary: "Read hello.txt.", changed_files: [] },
      },
    });
    expect(lastAssistant(ran.lines)).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "Phase reported." }] });
  });

  test("0.85: the inventory also arrives as entry_appended right after the header", async () => {
    const b = box();
    const inventory = join(b.root, "inventory.json");
    const ran = await pi([...JSON_ARGS, "-e", extension(b), "report"], {
      box: b,
      dialect: "0.85",
      scenario: "envelope",
      env: { AGENTPORT_INVENTORY_FILE: inventory },
    });
    expect(ran.lines[1]).toMatchObject({
      type: "entry_appended",
      entry: { type: "custom", customType: "agentport-inventory", data: { pi_version: "0.85.0", extensions: ["agentport-report"] } },
    });
    expect(JSON.parse(readFileSync(inventory, "utf8"))).toEqual({ pi_version: "0.85.0", extensions: ["agentport-report"] });
  });

  test("no -e: report_phase does not exist; an invalid envelope is an error result", async () => {
    const b = box();
    const inventory = join(b.root, "inventory.json");
    const bare = await pi([...JSON_ARGS, "report"], { box: b, scenario: "envelope", env: { AGENTPORT_INVENTORY_FILE: inventory } });
    expect(existsSync(inventory)).toBe(false);
    expect(bare.lines.find((l) => l.type === "tool_execution_end" && l.toolName === "report_phase")).toMatchObject({
      isError: true,
      result: { content: [{ type: "text", text: "Tool report_phase not found" }] },
    });
    const invalid = await pi([...JSON_ARGS, "-e", extension(b), "report"], { box: b, scenario: "envelope-invalid" });
    const end = invalid.lines.find((l) => l.type === "tool_execution_end") as Json;
    expect(end.isError).toBe(true);
    expect(end.result.content[0].text).toStartWith('Validation failed for tool "report_phase"');
    // --tools without report_phase hides it even with -e.
    const hidden = await pi([...JSON_ARGS, "-e", extension(b), "--tools", "read,bash", "report"], { box: b, scenario: "envelope" });
    expect(hidden.lines.find((l) => l.type === "tool_execution_end" && l.toolName === "report_phase")?.isError).toBe(true);
  });

  test("an -e file that does not exist fails to load: exit 1", async () => {
    const b = box();
    const ran = await pi([...JSON_ARGS, "-e", join(b.root, "nope.ts"), "x"], { box: b });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain("Failed to load extension");
  });
});

describe("fake pi: misbehaviour on demand", () => {
  test("aborted: stopReason aborted, 'Request was aborted', partial text kept, exit 0", async () => {
    const ran = await pi([...JSON_ARGS, "--no-session", "x"], { box: box(), scenario: "aborted" });
    expect(ran.code).toBe(0);
    expect(lastAssistant(ran.lines)).toMatchObject({
      stopReason: "aborted",
      errorMessage: "Request was aborted",
      content: [{ type: "text", text: "Thi" }],
    });
    expect(ran.lines.at(-1)?.type).toBe("agent_end");
  });

  test("crash: stderr and exit 1 in the middle of a run", async () => {
    const ran = await pi([...JSON_ARGS, "--no-session", "x"], { box: box(), scenario: "crash" });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain("something broke");
    expect(ran.lines.some((l) => l.type === "agent_end")).toBe(false);
  });

  test("oversize: one tool_execution_end line of the asked size", async () => {
    const size = 3 * 1024 * 1024;
    const ran = await pi([...JSON_ARGS, "--no-session", "x"], {
      box: box(),
      scenario: { steps: [{ oversize: size }, { text: "Read it." }] },
    });
    const big = ran.stdout.split("\n").find((l) => l.length > 1024 * 1024) ?? "";
    expect(big.length + 1).toBe(size);
    expect(JSON.parse(big).type).toBe("tool_execution_end");
    expect(lastAssistant(ran.lines).content[0].text).toBe("Read it.");
  });

  test("hang: SIGTERM ends it with 143, as pi's print mode does", async () => {
    const b = box();
    const proc = spawnPi([...JSON_ARGS, "--no-session", "x"], {
      box: b,
      scenario: { steps: [{ text: "Thinking forever." }, { hang: true }] },
    });
    await readUntil(proc, (l) => l.type === "message_end" && l.message.role === "assistant");
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(143);
  });

  test("thinking, raw lines and stderr steps", async () => {
    const ran = await pi([...JSON_ARGS, "--no-session", "x"], {
      box: box(),
      scenario: { steps: [{ thinking: "hmm" }, { text: "done" }, { raw: "not json" }, { stderr: "note\n" }] },
    });
    expect(ran.stderr).toBe("note\n");
    const lines = ran.stdout.split("\n");
    expect(lines).toContain("not json");
    const message = JSON.parse(lines.find((l) => l.includes('"message_end"') && l.includes('"assistant"')) ?? "{}").message;
    expect(message.content).toEqual([
      { type: "thinking", thinking: "hmm" },
      { type: "text", text: "done" },
    ]);
  });
});
