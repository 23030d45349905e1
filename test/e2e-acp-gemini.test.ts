// Real `gemini --acp` 0.61.0 (the test/peers package) driven by `agentport run
// --agent acp` through the compiled binary, against the loopback stand-in of
// the Gemini API (the recipe of ground-truth/acp-gemini-0.61.0-opencode-1.18.33.md:
// the model pinned with -m, the workspace trusted, the key a dummy).
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { peerOrSkip } from "./peers/peers.ts";
import { geminiEnv, startGeminiStandin, type GeminiScript } from "./standins/gemini.ts";
import { removeTempDirs, type Standin } from "./standins/util.ts";
import { agentport, leftAfter, makeWorld, type World } from "./standins/world.ts";
import { BIN } from "./helpers.ts";

const GEMINI = peerOrSkip("gemini");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

function world(script: GeminiScript): World {
  const standin = startGeminiStandin(script);
  standins.push(standin);
  return makeWorld(
    "agentport-e2e-acp-gemini-",
    standin,
    (dir, url) => ({ ...geminiEnv(dir, url, 1), GEMINI_CLI_TRUST_WORKSPACE: "true" }),
    {},
  );
}

const run = (w: World, prompt: string, extra: string[] = []) =>
  agentport(
    w,
    ["run", "--agent", "acp", "--acp-command", `${GEMINI} --acp -m gemini-2.5-flash`, "--json", "--progress", "lines", ...extra, "-"],
    { stdin: prompt },
  );

describe.skipIf(GEMINI === null)("agentport run --agent acp with the real gemini --acp 0.61.0", () => {
  test("a text answer: the chunks as the text, tokens from _meta.quota, cost unknown (null), the agent named on the phase", async () => {
    const w = world([{ text: "The answer is 4.", usage: { input: 1000, output: 10 } }]);
    const { code, verdict, stderr } = await run(w, "What is 2+2?");
    expect(code).toBe(0);
    expect(verdict).toMatchObject({
      agent: "acp",
      status: "completed",
      text: "The answer is 4.",
      stop_reason: "end_turn",
      cost_micro_usd: null,
    });
    expect(verdict?.summary).toMatchObject({ agent_name: "gemini-cli", agent_version: "0.61.0" });
    expect(verdict?.cost_source).toBe("unknown");
    expect(verdict?.tokens?.output).toBe(10);
    expect(stderr).toContain("acp: started");
    expect(await leftAfter(w.dir)).toEqual([]);
  });

  test("a write needing permission: rejected by default (refused, file not written); allowed by bypassPermissions (written)", async () => {
    const script = (): GeminiScript => (_req, n) =>
      n === 1
        ? { text: "", toolCall: { name: "write_file", arguments: { file_path: "made-by-write.txt", content: "x\n" } } }
        : { text: "Done." };
    const rejected = world(script());
    const r = await run(rejected, "Write the file.");
    expect(r.code).toBe(0);
    expect(r.verdict?.refused).toEqual([
      {
        kind: "permission",
        subject: "edit made-by-write.txt: rejected; allow it with --permission-mode acceptEdits (or bypassPermissions)",
      },
    ]);
    expect(existsSync(join(rejected.project, "made-by-write.txt"))).toBe(false);
    const allowed = world(script());
    const a = await run(allowed, "Write the file.", ["--permission-mode", "bypassPermissions"]);
    expect(a.verdict).toMatchObject({ status: "completed", refused: [] });
    expect(readFileSync(join(allowed.project, "made-by-write.txt"), "utf8")).toBe("x\n");
  });

  test("a 401: the prompt's error, an auth fault of the environment (exit 5)", async () => {
    const w = world([{ status: 401, body: "API key not valid." }]);
    const { code, verdict } = await run(w, "Say hi");
    expect(code).toBe(5);
    expect(verdict).toMatchObject({ status: "failed", env_fault: true, failure: { kind: "provider_error" } });
    expect(verdict?.summary.api_error_status).toBe(401);
  });

  test("a hung model call: Ctrl-C sends session/cancel, gemini answers cancelled at once, nothing left behind", async () => {
    const w = world([{ hang: true }]);
    const proc = Bun.spawn(
      [BIN, "run", "--agent", "acp", "--acp-command", `${GEMINI} --acp -m gemini-2.5-flash`, "--json", "--progress", "off", "Say hi"],
      { cwd: w.project, env: w.env, stdout: "pipe", stderr: "pipe" },
    );
    // gemini's start takes seconds on a busy machine: interrupt once the model call is open.
    const until = performance.now() + 60_000;
    while (w.standin.log.filter((r) => r.method === "POST").length === 0 && performance.now() < until) await Bun.sleep(100);
    const asked = performance.now();
    proc.kill("SIGINT");
    const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    const seconds = (performance.now() - asked) / 1000;
    const verdict = JSON.parse(stdout);
    expect(code).toBe(130);
    expect(verdict).toMatchObject({ status: "aborted", stop_reason: "cancelled", summary: { cancel_sent: true } });
    expect(seconds).toBeLessThan(5);
    expect(await leftAfter(w.dir)).toEqual([]);
  });
});
