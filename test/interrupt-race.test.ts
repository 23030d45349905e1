// A stop that comes right after the agent wrote its result, before
// agentport has read it off the pipe (two pipes, stdout and stderr, are read
// in no fixed order): what the agent wrote before the stop is read first, so
// the run is judged finished (completed, exit 0), as README "The verdict
// rule" says of a stop after the result. Through the compiled binary, many
// times over: each try is a race the old driver lost now and then.
import { afterAll, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { BIN, fakeProject } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const MARK = "RESULT-WRITTEN";

/** Resolves once the agent's stderr.log under `state` shows the mark. */
async function marked(state: string): Promise<void> {
  const runs = join(state, "runs");
  for (let i = 0; i < 4000; i++) {
    for (const dir of existsSync(runs) ? readdirSync(runs) : []) {
      const log = join(runs, dir, "stderr.log");
      if (existsSync(log) && readFileSync(log, "utf8").includes(MARK)) return;
    }
    await Bun.sleep(2);
  }
  throw new Error("the mark never came");
}

test("Ctrl-C right after the result is written: completed, exit 0, every time", async () => {
  const w = fakeProject("agentport-interrupt-race-");
  made.push(w.root);
  // Quiet first (the reader waits longest between looks at an empty pipe), then the result and the mark at once.
  const scenario = JSON.stringify({
    steps: [{ text: "the answer" }, { sleep: 400 }, { result: {} }, { stderr: `${MARK}\n` }, { hang: true }],
  });
  const outcomes: string[] = [];
  for (let round = 0; round < 8; round++) {
    const state = join(w.root, `state-${round}`);
    const proc = Bun.spawn([BIN, "run", "--agent", "claude", "--json", "--progress", "off", "go"], {
      cwd: w.proj,
      env: { ...process.env, ...w.env, AGENTPORT_HOME: state, AGENTPORT_FAKE_SCENARIO: scenario },
      stdout: "pipe",
      stderr: "pipe",
    });
    await marked(state);
    proc.kill("SIGINT");
    const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    const verdict = JSON.parse(stdout);
    outcomes.push(`${verdict.status}/${code}`);
  }
  expect(outcomes).toEqual(Array(8).fill("completed/0"));
}, 90_000);
