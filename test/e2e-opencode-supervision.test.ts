// Supervision of the real opencode 1.18.33 as `opencode serve`, against the
// loopback chat-completions stand-in: --grace posts the wrap-up into the busy
// session and opencode takes it at its next step (the model's next request
// carries it; the run completes before its timeout), and a silent bash tool
// that burns CPU past --stall is no stall (the server's tree is sampled).
import { afterAll, describe, expect, test } from "bun:test";
import { peerOrSkip } from "./peers/peers.ts";
import { startOpenAIStandin, type Reply } from "./standins/openai.ts";
import { isTitleRequest, opencodeEnv } from "./standins/opencode.ts";
import { removeTempDirs, type Standin } from "./standins/util.ts";
import { agentport, leftAfter, makeWorld, type World } from "./standins/world.ts";

const OPENCODE = peerOrSkip("opencode");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

function world(replies: Reply[]): World & { requests: () => Record<string, any>[] } {
  let calls = 0;
  const seen: Record<string, any>[] = [];
  const standin = startOpenAIStandin((req) => {
    if (isTitleRequest(req)) return { text: "A title" };
    seen.push(req);
    return replies[Math.min(++calls, replies.length) - 1]!;
  });
  standins.push(standin);
  const w = makeWorld("agentport-e2e-opencode-supervision-", standin, opencodeEnv, { AGENTPORT_OPENCODE_BIN: OPENCODE ?? "" });
  return { ...w, requests: () => seen };
}

const run = (w: World, prompt: string, extra: string[]) =>
  agentport(w, ["run", "--agent", "opencode", "--serve", "--json", "--progress", "off", ...extra, "-"], { stdin: prompt, timeoutMs: 150_000 });

const bash = (command: string): Reply => ({ toolCall: { name: "bash", arguments: { command, description: "work" } } });

describe.skipIf(OPENCODE === null)("opencode --serve supervision with the real opencode 1.18.33", () => {
  test("--grace: the wrap-up reaches the model at opencode's next step; the run completes in the grace period", async () => {
    const w = world([bash("sleep 6"), { text: "Saved my work. Done." }]);
    const { code, verdict } = await run(w, "Work for a while", ["--timeout", "40", "--grace", "36"]);
    expect({ code, status: verdict?.status, text: verdict?.text }).toEqual({ code: 0, status: "completed", text: "Saved my work. Done." });
    expect(verdict?.summary).toMatchObject({ wrap_up: "timeout", wrap_up_finished: true });
    const second = JSON.stringify(w.requests()[1]?.messages ?? []);
    expect(second).toContain("Time is nearly up: finish now, save your work and report.");
    expect(await leftAfter(w.project)).toEqual([]);
  }, 160_000);

  test("a silent bash tool that burns CPU longer than --stall is no stall", async () => {
    const w = world([bash("end=$(($(date +%s)+25)); while [ $(date +%s) -lt $end ]; do :; done"), { text: "Busy, then done." }]);
    const { code, verdict } = await run(w, "Compute", ["--stall", "12"]);
    expect({ code, status: verdict?.status, stall: verdict?.summary.stall_kind }).toEqual({ code: 0, status: "completed", stall: undefined });
    expect(verdict?.text).toBe("Busy, then done.");
  }, 160_000);
});
