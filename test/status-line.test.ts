// The status line on a terminal (a pseudo-terminal from `script`): agent and
// model, elapsed time, what it does; the elapsed time goes on while the model
// is silent, so a long call does not look frozen.
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
  // The model from the stream, and one frame a second while the stream is silent.
  expect(frames).toContain("claude claude-fake-1 · 0s · writing");
  expect(frames).toContain("claude claude-fake-1 · 1s · writing");
  expect(frames).toContain("claude claude-fake-1 · 2s · writing");
  expect(out).toContain("done");
});
