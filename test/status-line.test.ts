// The status line on a terminal (a pseudo-terminal from `script`): agent and
// model, elapsed time, tokens and cost so far, what it does; the elapsed time
// goes on while the model is silent, so a long call does not look frozen.
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { BIN, fakeProject } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

test.skipIf(Bun.which("script") === null)("the status line ticks through a slow reply", async () => {
  const w = fakeProject("agentport-status-");
  made.push(w.root);
  const slow = JSON.stringify({ steps: [{ text: "one" }, { sleep: 2_600 }, { text: "done" }, { result: { text: "done" } }] });
  const proc = Bun.spawn(["script", "-qfc", `${BIN} run --agent claude hi`, "/dev/null"], {
    cwd: w.proj,
    env: { ...process.env, ...w.env, NO_COLOR: "1", AGENTPORT_FAKE_SCENARIO: slow },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  expect(code).toBe(0);
  const frames = out.split("\r").map((f) => f.replace("\u001b[K", ""));
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
