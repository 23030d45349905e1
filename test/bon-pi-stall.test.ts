// A pi RPC turn's silent busy tool is no stall: `agentport bon` with the real
// pi 0.73.1 against the loopback stand-in, whose prime runs a bash tool that
// burns CPU without a byte of output for longer than --stall. pi's tree is
// sampled while the tool call is open, as a one-shot run's is; an idle tool
// (a sleep) still stalls.
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Harvest } from "../src/bon/harvest.ts";
import { BIN, ROOT } from "./helpers.ts";
import { piEnv, startOpenAIStandin, type Standin } from "./standins/openai.ts";
import type { RecordedRequest, Reply } from "./standins/util.ts";
import { specRepo } from "./standins/spec-repo.ts";
import { removeTempDirs, spawnCollect, tempDir } from "./standins/util.ts";

const PI = join(ROOT, "node_modules", ".bin", "pi");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

const busy = "end=$(($(date +%s)+14)); while [ $(date +%s) -lt $end ]; do :; done";

/** The prime runs `command`, then reports; each arm writes the answer and reports. */
function model(command: string) {
  return (req: RecordedRequest): Reply => {
    const messages = req.messages as Record<string, any>[];
    const lastUser = messages.findLastIndex((m) => m.role === "user");
    const ask = JSON.stringify(messages[lastUser]?.content ?? "");
    const step = messages.slice(lastUser + 1).filter((m) => m.role === "assistant").length;
    if (ask.includes("READING ONLY")) {
      if (step === 0) return { toolCall: { name: "bash", arguments: { command } } };
      if (step === 1)
        return { toolCall: { name: "report_phase", arguments: { status: "success", summary: "Computed.", changed_files: [] } } };
      return { text: "Read." };
    }
    if (step === 0) return { toolCall: { name: "write", arguments: { path: "answer.txt", content: "42\n" } } };
    if (step === 1)
      return {
        toolCall: { name: "report_phase", arguments: { status: "success", summary: "Wrote answer.txt.", changed_files: ["answer.txt"] } },
      };
    return { text: "Done." };
  };
}

async function bon(command: string) {
  const dir = tempDir("agentport-bon-pi-stall-");
  const standin = startOpenAIStandin(model(command));
  standins.push(standin);
  const repo = specRepo(dir);
  const env = { ...piEnv(dir, standin.url), AGENTPORT_HOME: join(dir, "agentport"), AGENTPORT_PI_BIN: PI, AGENTPORT_GATEWAY: "" };
  const args = [
    "bon",
    "specs/task.md",
    "--model",
    "standin/standin-model",
    "--direct",
    "--require-ext",
    "agentport",
    "--gate",
    "grep -qx 42 answer.txt",
    "--arms",
    "2",
    "--stall",
    "6",
    "--json",
    "--progress",
    "off",
  ];
  const ran = await spawnCollect([BIN, ...args], { cwd: repo, env, timeoutMs: 90_000 });
  return { ...ran, harvest: ran.stdout.trim().startsWith("{") ? (JSON.parse(ran.stdout) as Harvest) : null };
}

test("bon's prime (a pi RPC turn) running a silent busy bash tool longer than --stall completes", async () => {
  const { harvest, ...ran } = await bon(busy);
  expect({ code: ran.code, prime: harvest?.prime?.status, stderr: ran.code === 0 ? "" : ran.stderr.slice(-600) }).toEqual({
    code: 0,
    prime: "completed",
    stderr: "",
  });
}, 100_000);

test("an idle bash tool (a sleep) in the prime still stalls, as kind tool (exit 4)", async () => {
  const { code, harvest } = await bon("sleep 14");
  expect({ code, prime: harvest?.prime?.status }).toEqual({ code: 4, prime: "stalled" });
}, 100_000);
