// A stall is silence, not a long tool call: through the compiled binary with
// the fake claude, a tool call that burns CPU longer than --stall without a
// byte of output completes; a tool call idle as long stalls (stall_kind tool);
// a silent wait with no tool open stalls as before (stall_kind api); and
// --tool-timeout bounds one tool call, busy or not.
import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { VerdictSchema } from "../src/core/verdict.ts";
import { agentport, fakeClaudeDir } from "./helpers.ts";

let dir: string;
let claude: string;
beforeAll(() => {
  ({ dir, claude } = fakeClaudeDir("agentport-tool-stall-"));
});

const toolStep = (command: string) =>
  JSON.stringify({
    steps: [{ text: "Running it." }, { tool: { name: "Bash", input: { command }, run: command } }, { text: "Done." }, { result: {} }],
  });
// A silent busy loop of about S seconds (sh only: no output, all CPU).
const busy = (s: number) => `end=$(($(date +%s)+${s})); while [ $(date +%s) -lt $end ]; do :; done`;
// A tool whose output keeps growing for about S seconds with next to no CPU: bash's own echo
// and a timed read on a fifo that never answers, no process started per line.
const writing = (s: number) =>
  `bash -c 'f=$(mktemp -u); mkfifo $f; exec 9<>$f; rm $f; for i in $(seq ${s * 4}); do echo line $i; read -t 0.25 -u 9; done'`;

async function run(scenario: string, args: string[]) {
  const ran = await agentport(["run", "--claude-bin", claude, "--json", "--progress", "off", ...args, "go"], {
    cwd: dir,
    env: { AGENTPORT_HOME: join(dir, "home"), AGENTPORT_FAKE_SCENARIO: scenario },
  });
  return { ...ran, verdict: VerdictSchema.parse(JSON.parse(ran.stdout)) };
}

describe("the stall clock and open tool calls", () => {
  test("a silent tool call that uses CPU for longer than --stall is no stall", async () => {
    const { code, verdict } = await run(toolStep(busy(4)), ["--stall", "1.5"]);
    expect(verdict.status).toBe("completed");
    expect(code).toBe(0);
    expect(verdict.summary.stall_kind).toBeUndefined();
  });

  test("a tool call whose output keeps growing, with no CPU to speak of, is no stall", async () => {
    const { code, verdict } = await run(toolStep(writing(6)), ["--stall", "1.5"]);
    expect(verdict.summary.stall_kind).toBeUndefined();
    expect(verdict.status).toBe("completed");
    expect(code).toBe(0);
  });

  test("a tool call idle for --stall is a stall of kind tool (exit 4)", async () => {
    const { code, verdict } = await run(toolStep("sleep 30"), ["--stall", "1.5"]);
    expect(code).toBe(4);
    expect(verdict.status).toBe("stalled");
    expect(verdict.summary.stall_kind).toBe("tool");
  });

  test("a silent wait with no tool call open is a stall of kind api, as before", async () => {
    const { code, verdict } = await run("stall", ["--stall", "1"]);
    expect(code).toBe(4);
    expect(verdict.status).toBe("stalled");
    expect(verdict.summary.stall_kind).toBe("api");
    expect(verdict.failure?.message).toContain("no tool call open");
  });

  test("--tool-timeout bounds one tool call, busy or not", async () => {
    const { code, verdict } = await run(toolStep(busy(20)), ["--stall", "5", "--tool-timeout", "1.5"]);
    expect(code).toBe(4);
    expect(verdict.status).toBe("stalled");
    expect(verdict.summary.stall_kind).toBe("tool");
    expect(verdict.failure?.message).toContain("--tool-timeout");
  });
});
