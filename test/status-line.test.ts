// The status line on a terminal (a pseudo-terminal from `script`): agent and
// model, elapsed time, tokens and cost so far, what it does; the elapsed time
// goes on while the model is silent, so a long call does not look frozen.
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { BIN, fakeProject, type FakeProject } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** `agentport run --agent AGENT hi` on a pseudo-terminal: what the terminal got, and its status-line frames. */
async function underTerminal(w: FakeProject, agent: string, scenario: string, flags: string[] = []) {
  const proc = Bun.spawn(["script", "-qfc", `${BIN} run --agent ${agent} ${flags.join(" ")} hi`, "/dev/null"], {
    cwd: w.proj,
    env: { ...process.env, ...w.env, NO_COLOR: "1", AGENTPORT_FAKE_SCENARIO: scenario },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return { out, code, frames: out.split("\r").map((f) => f.replace("\u001b[K", "")) };
}

test.skipIf(Bun.which("script") === null)("the status line ticks through a slow reply", async () => {
  const w = fakeProject("agentport-status-");
  made.push(w.root);
  const slow = JSON.stringify({ steps: [{ text: "one" }, { sleep: 2_600 }, { text: "done" }, { result: { text: "done" } }] });
  const { out, code, frames } = await underTerminal(w, "claude", slow);
  expect(code).toBe(0);
  // The model from the stream, and one frame a second while the stream is silent,
  // with the tokens of the message so far (the fake's assistant messages use 100 in, 1 out).
  expect(frames).toContain("claude claude-fake-1 · 0s · 100 in / 1 out · writing");
  expect(frames).toContain("claude claude-fake-1 · 1s · 100 in / 1 out · writing");
  expect(frames).toContain("claude claude-fake-1 · 2s · 100 in / 1 out · writing");
  // Before anything is counted, no figures; the result brings claude's cost and its billed tokens.
  expect(frames).toContain("claude claude-fake-1 · 0s · started (claude-fake-1)");
  expect(frames.some((f) => /^claude claude-fake-1 · \d+s · \$0\.0123 · 3000 in \/ 42 out · writing$/.test(f))).toBe(true);
  expect(out).toContain("done");
});

test.skipIf(Bun.which("script") === null)("pi: the cost and tokens of each message as it ends, while the run goes on", async () => {
  const w = fakeProject("agentport-status-", { AGENTPORT_GATEWAY: "" });
  made.push(w.root);
  const usage = { input: 1200, output: 30, cost: 0.0123 };
  const slow = JSON.stringify({
    steps: [{ tool: { name: "read", args: { path: "a.txt" } }, usage }, { sleep: 1_600 }, { text: "done", usage }],
  });
  const { out, code, frames } = await underTerminal(w, "pi", slow, ["--model", "fake-model-1"]);
  expect(code).toBe(0);
  // The model asked for (pi's stream names none before its first message); the first message's
  // figures stay on the line while pi is silent, the second's add to them.
  expect(frames).toContain("pi fake-model-1 · 0s · started");
  expect(frames.filter((f) => /^pi fake-model-1 · \d+s · \$0\.0123 · 1200 in \/ 30 out · tool read done$/.test(f)).length).toBeGreaterThan(
    1,
  );
  expect(frames.some((f) => / · \$0\.0246 · 2400 in \/ 60 out · /.test(f))).toBe(true);
  expect(out).toContain("done");
});
