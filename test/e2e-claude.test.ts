// Real Claude Code 2.1.197 (the devDependency), driven through the compiled
// binary, against a loopback stand-in of the Anthropic Messages API.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Verdict } from "../src/core/verdict.ts";
import { ROOT } from "./helpers.ts";
import { claudeEnv, startAnthropicStandin } from "./standins/anthropic.ts";
import type { Script, Standin } from "./standins/util.ts";
import { removeTempDirs, tempDir } from "./standins/util.ts";
import { agentport } from "./standins/world.ts";

const CLAUDE = join(ROOT, "node_modules", ".bin", "claude");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

interface World {
  dir: string;
  project: string;
  env: Record<string, string>;
  standin: Standin;
}

function world(script: Script | ((project: string) => Script)): World {
  const dir = tempDir("agentport-e2e-claude-");
  const project = join(dir, "project");
  const standin = startAnthropicStandin(
    typeof script === "function" && script.length === 1 ? (script as (p: string) => Script)(project) : (script as Script),
  );
  standins.push(standin);
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "notes.txt"), "line one\nthe secret word is pineapple\n");
  return {
    dir,
    project,
    standin,
    env: { ...claudeEnv(dir, standin.url), AGENTPORT_HOME: join(dir, "agentport"), AGENTPORT_CLAUDE_BIN: CLAUDE },
  };
}

const run = (w: World, prompt: string, extra: string[] = []) =>
  agentport(w, ["run", "--agent", "claude", "--json", "--progress", "lines", ...extra, "-"], { stdin: prompt });

const posts = (w: World) => w.standin.log.filter((r) => r.method === "POST").length;

describe("agentport run --agent claude with the real claude 2.1.197", () => {
  test("a text answer: text, cost, tokens, the session id chosen by agentport", async () => {
    const w = world([{ text: "Hello from the stand-in." }]);
    const { code, verdict, stderr } = await run(w, "Say hello");
    expect(code).toBe(0);
    expect(verdict).toMatchObject({
      agent: "claude",
      status: "completed",
      ok: true,
      text: "Hello from the stand-in.",
      stop_reason: "end_turn",
    });
    expect(verdict?.cost_micro_usd).toBeGreaterThan(0);
    expect(verdict?.tokens?.input).toBeGreaterThan(0);
    expect(stderr).toContain("claude: started");
    // claude sent the id agentport chose with --session-id.
    const sent = w.standin.log.find((r) => r.method === "POST")?.headers["x-claude-code-session-id"];
    expect(sent).toBe(verdict?.session_id ?? "none");
  });

  test("a tool call then text: Read shows its path relative to the cwd", async () => {
    // Claude's Read wants an absolute path.
    const w = world((project: string) => [
      { toolCall: { name: "Read", arguments: { file_path: join(project, "notes.txt") } } },
      { text: "The word is pineapple." },
    ]);
    const { code, verdict, stderr } = await run(w, "What is the secret word?");
    expect(code).toBe(0);
    expect(verdict?.text).toBe("The word is pineapple.");
    expect(stderr).toContain("claude: tool Read notes.txt");
    expect(stderr).not.toContain("pineapple");
    expect(verdict?.summary.tool_calls).toBe(1);
  });

  test("a 500 retried then failed: retry progress shown, exit 1", async () => {
    const w = world([{ status: 500 }]);
    const { code, verdict, stderr } = await run(w, "Say hello");
    expect(code).toBe(1);
    expect(verdict?.status).toBe("failed");
    expect(verdict?.failure?.message).toContain("api_error_status 500");
    expect(stderr).toContain("claude: provider retry (attempt 1 of 2)");
    expect(posts(w)).toBe(3);
  });

  test("--envelope: the request tells the model what to return and the schema; the fenced block is the envelope", async () => {
    const envelope = { status: "success", summary: "Said hello.", changed_files: [] };
    const w = world([{ text: `Done.\n\n\`\`\`json\n${JSON.stringify(envelope)}\n\`\`\`` }]);
    const { code, verdict } = await run(w, "Say hello", ["--envelope"]);
    expect(code).toBe(0);
    expect(verdict).toMatchObject({ status: "completed", ok: true, envelope });
    const system = JSON.stringify(w.standin.requests.find((r) => Array.isArray(r.messages))?.system ?? "");
    expect(system).toContain("The envelope must match this JSON Schema");
    expect(system).toContain("changed_files");
    expect(system).toContain("one fenced ```json block");
  });

  test("a timeout while claude retries 429s: status timeout, the environment at fault (rate_limit), exit 5", async () => {
    const w = world([{ status: 429, delayMs: 1_000 }]);
    w.env.CLAUDE_CODE_MAX_RETRIES = "10";
    const { code, verdict } = await run(w, "Say hello", ["--timeout", "10"]);
    expect(verdict).toMatchObject({
      status: "timeout",
      ok: false,
      env_fault: true,
      fault: { kind: "rate_limit" },
      failure: { kind: "stopped", cause: "timeout" },
    });
    expect(code).toBe(5);
  });

  test("a usage limit (OAuth, anthropic-ratelimit-unified-* rejected): parked at once, exit 75, resume_after the reset", async () => {
    const reset = Math.floor(Date.now() / 1000) + 2 * 3600;
    const wall = {
      "anthropic-ratelimit-unified-status": "rejected",
      "anthropic-ratelimit-unified-reset": String(reset),
      "anthropic-ratelimit-unified-representative-claim": "five_hour",
    };
    const w = world([{ status: 429, body: "This request would exceed your account's rate limit. Please try again later.", headers: wall }]);
    delete w.env.ANTHROPIC_API_KEY;
    w.env.CLAUDE_CODE_OAUTH_TOKEN = "sk-ant-oat01-standin-dummy";
    w.env.CLAUDE_CODE_MAX_RETRIES = "10";
    const started = performance.now();
    const { code, verdict, stderr } = await run(w, "Say hello", ["--timeout", "60"]);
    expect(verdict).toMatchObject({
      status: "parked",
      ok: false,
      fault: { kind: "quota_wall" },
      resume_after: new Date(reset * 1000).toISOString(),
    });
    expect(code).toBe(75);
    expect(posts(w)).toBe(1);
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(stderr).toContain(`agentport resume --when-ready ${verdict?.session_id}`);
  });

  test("a permission denial is recorded as refused, with the Bash description and never the command", async () => {
    const w = world([
      { toolCall: { name: "Bash", arguments: { command: "touch x", description: "Create a file" } } },
      { text: "It was not permitted." },
    ]);
    const { code, verdict, stdout, stderr } = await run(w, "Create x");
    expect(code).toBe(0);
    expect(verdict?.refused).toEqual([{ kind: "permission", subject: "Bash: Create a file" }]);
    expect(stdout + stderr).not.toContain("touch x");
    expect(existsSync(join(w.project, "x"))).toBe(false);
  });

  test("the run folder: verdict.json as printed, a stream that replays to it, progress ending with the verdict, no secret anywhere", async () => {
    // A canary key, by value only (no key shape): it reaches claude's environment, the argv and the model's answer.
    const canary = `canary${crypto.randomUUID().replaceAll("-", "")}`;
    const w = world((project: string) => [
      { toolCall: { name: "Read", arguments: { file_path: join(project, "notes.txt") } } },
      { text: `Read it. The key was ${canary}.` },
    ]);
    w.env.ANTHROPIC_API_KEY = canary;
    const { code, stdout, verdict } = await run(w, "What is in notes.txt?", ["--append-system-prompt", `Never say ${canary}.`]);
    expect(code).toBe(0);
    expect(verdict).toMatchObject({ status: "completed", ok: true, text: "Read it. The key was [redacted]." });
    expect(w.standin.log.find((r) => r.method === "POST")?.headers["x-api-key"]).toBe(canary);
    const show = await agentport(w, ["show", "--json", verdict!.session_id!]);
    const dir: string = JSON.parse(show.stdout).phases.at(-1).run_dir;
    expect(readdirSync(dir).sort()).toEqual(["argv.json", "progress.ndjson", "stderr.log", "stream.jsonl", "verdict.json"]);
    expect(readFileSync(join(dir, "verdict.json"), "utf8")).toBe(stdout);

    // The stream, replayed by file and by session id: the same verdict but for the live process's exit code.
    const unlived = (v: Verdict) => ({ ...v, isolated: undefined, summary: { ...v.summary, exit_code: undefined } });
    const byFile = await agentport(w, ["replay", "--agent", "claude", "--json", join(dir, "stream.jsonl")]);
    const byId = await agentport(w, ["replay", "--json", verdict!.session_id!]);
    expect(byFile.code).toBe(0);
    expect(unlived(byFile.verdict!)).toEqual(unlived(verdict!));
    expect(byId.stdout).toBe(byFile.stdout);

    // progress.ndjson: every line a record of this session; running totals as claude reports them; the verdict last.
    const progress = readFileSync(join(dir, "progress.ndjson"), "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    for (const record of progress) expect(record).toMatchObject({ session_id: verdict!.session_id, agent: "claude" });
    expect(progress.find((r) => r.kind === "tool_started")).toMatchObject({ tool: "Read", detail: "notes.txt" });
    const running = progress.filter((r) => r.kind !== "verdict" && r.tokens?.input > 0);
    expect(running.length).toBeGreaterThan(1);
    expect(running.at(-1)).toMatchObject({ tokens: verdict!.tokens!, cost_micro_usd: verdict!.cost_micro_usd });
    expect(progress.at(-1)).toEqual({
      schema_version: 1,
      ts: progress.at(-1).ts,
      session_id: verdict!.session_id,
      agent: "claude",
      kind: "verdict",
      status: "completed",
      ok: true,
      cost_micro_usd: verdict!.cost_micro_usd,
      tokens: verdict!.tokens,
      exit_code: 0,
    });

    // argv.json: the command claude ran, its secret redacted; the canary nowhere in the folder.
    const argv = JSON.parse(readFileSync(join(dir, "argv.json"), "utf8"));
    expect(argv).toMatchObject({ agent: "claude", route: null, prompt: { bytes: "What is in notes.txt?".length, kept: false } });
    expect(argv.argv[0]).toBe(CLAUDE);
    expect(argv.argv[argv.argv.indexOf("--session-id") + 1]).toBe(verdict!.session_id);
    expect(argv.argv.join(" ")).toContain("Never say [redacted].");
    for (const file of readdirSync(dir)) expect(readFileSync(join(dir, file), "utf8")).not.toContain(canary);
  });

  test("resume in the birth folder keeps the id; from another folder it is refused with zero requests", async () => {
    const w = world([{ text: "First answer." }, { text: "Second answer." }]);
    const first = await run(w, "First question");
    expect(first.code).toBe(0);
    const id = first.verdict?.session_id ?? "";
    const second = await agentport(w, ["resume", id, "--json", "-"], { stdin: "Second question" });
    expect(second.code).toBe(0);
    expect(second.verdict?.text).toBe("Second answer.");
    expect(second.verdict?.session_id).toBe(id);
    expect(JSON.stringify(w.standin.requests[1]?.messages)).toContain("First question");

    const elsewhere = join(w.dir, "elsewhere");
    mkdirSync(elsewhere);
    const before = w.standin.log.length;
    const refused = await agentport(w, ["resume", id.slice(0, 8), "Third question"], { cwd: elsewhere });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`refused: session ${id} (claude) was born in ${w.project}, not in ${elsewhere}`);
    expect(w.standin.log.length).toBe(before);
  });
});
