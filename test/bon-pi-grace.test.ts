// `bon --timeout T --grace D` with the real pi 0.73.1 against the loopback
// stand-in: pi's RPC `steer` carries the wrap-up. Each arm's first step is a
// bash tool call; pi gives the queued wrap-up to the model once the tool
// returns, and the stand-in (the model) sees it as the last user message.
// Three arms: one that finishes before the grace point (told nothing), one
// whose slow tool outlives the grace point and that finishes on the wrap-up,
// one that reads it and goes on until the timeout.
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Harvest } from "../src/bon/harvest.ts";
import { WRAP_UP } from "../src/core/deadline.ts";
import { BIN, ROOT } from "./helpers.ts";
import { piEnv, startOpenAIStandin, type Standin } from "./standins/openai.ts";
import { specRepo } from "./standins/spec-repo.ts";
import { chatOf } from "./standins/chat.ts";
import type { RecordedRequest, Reply } from "./standins/util.ts";
import { removeTempDirs, spawnCollect, tempDir } from "./standins/util.ts";

const PI = join(ROOT, "node_modules", ".bin", "pi");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

const VARIANTS = ["quick", "obeys", "ignores"] as const;
const write = { toolCall: { name: "write", arguments: { path: "answer.txt", content: "42\n" } } };
const report = {
  toolCall: { name: "report_phase", arguments: { status: "success", summary: "Wrote answer.txt.", changed_files: ["answer.txt"] } },
};

/** The model: the prime reads and reports; each arm, in the order they first ask, plays a variant marked in its first tool call. */
function model() {
  let arms = 0;
  return (req: RecordedRequest): Reply => {
    const { messages, ask, step } = chatOf(req);
    const all = JSON.stringify(messages);
    if (ask.includes("READING ONLY")) {
      if (step === 0) return { toolCall: { name: "read", arguments: { path: "specs/task.md" } } };
      if (step === 1)
        return { toolCall: { name: "report_phase", arguments: { status: "success", summary: "Write 42.", changed_files: [] } } };
      return { text: "Read." };
    }
    const variant = VARIANTS.find((v) => all.includes(`# arm-${v}`));
    if (variant === undefined) {
      const v = VARIANTS[arms++ % VARIANTS.length]!;
      return { toolCall: { name: "bash", arguments: { command: v === "quick" ? `true # arm-${v}` : `sleep 8 # arm-${v}` } } };
    }
    const told = ask.includes(WRAP_UP.timeout);
    if (variant === "ignores" && told) return { toolCall: { name: "bash", arguments: { command: "sleep 60 # still working" } } };
    if (variant === "obeys" && !told) return { toolCall: { name: "bash", arguments: { command: "sleep 2 # not told yet" } } };
    // What the arm did since its first step (its history holds the prime's turn too).
    const mark = messages.findIndex((m) => m.role === "assistant" && JSON.stringify(m).includes("# arm-"));
    const since = JSON.stringify(messages.slice(mark + 1).filter((m) => m.role === "assistant"));
    if (!since.includes('"name":"write"')) return write;
    if (!since.includes('"name":"report_phase"')) return report;
    return { text: "Done." };
  };
}

test("real pi: told at T − D through steer, the arm that obeys finishes in the grace, the one that ignores it times out, the quick one is told nothing", async () => {
  const dir = tempDir("agentport-bon-pi-grace-");
  const standin = startOpenAIStandin(model());
  standins.push(standin);
  const repo = specRepo(dir);
  const env = { ...piEnv(dir, standin.url), AGENTPORT_HOME: join(dir, "agentport"), AGENTPORT_PI_BIN: PI, AGENTPORT_GATEWAY: "" };
  const args = ["bon", "specs/task.md", "--model", "standin/standin-model", "--direct", "--require-ext", "agentport"];
  const ran = await spawnCollect(
    [
      BIN,
      ...args,
      "--gate",
      "grep -qx 42 answer.txt",
      "--arms",
      "3",
      "--parallel",
      "--timeout",
      "20",
      "--grace",
      "14",
      "--json",
      "--progress",
      "off",
    ],
    { cwd: repo, env, timeoutMs: 120_000 },
  );
  if (!ran.stdout.trim().startsWith("{")) throw new Error(`exit ${ran.code}: ${ran.stderr.slice(-800)}`);
  const h = JSON.parse(ran.stdout) as Harvest;
  const rows = h.arms.map((a) => ({
    variant: VARIANTS.find((v) => readFileSync(a.session_file!, "utf8").includes(`# arm-${v}`)),
    verdict: a.verdict,
    status: a.status,
    wrap_up: a.wrap_up,
    wrap_up_finished: a.wrap_up_finished,
  }));
  rows.sort((a, b) => VARIANTS.indexOf(a.variant!) - VARIANTS.indexOf(b.variant!));
  expect({ code: ran.code, prime: h.prime?.status, rows }).toEqual({
    code: 0,
    prime: "completed",
    rows: [
      { variant: "quick", verdict: "green", status: "completed", wrap_up: null, wrap_up_finished: null },
      { variant: "obeys", verdict: "green", status: "completed", wrap_up: "timeout", wrap_up_finished: true },
      { variant: "ignores", verdict: "red", status: "timeout", wrap_up: "timeout", wrap_up_finished: false },
    ],
  });
}, 130_000);
