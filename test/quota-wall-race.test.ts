// The race behind a flaky quota-wall run (pi relaying codex's usage limit):
// pi writes a failed attempt's agent_end and its auto_retry_start back to
// back, and a loaded machine can part them. A stop that catches up with
// stdout in between saw an agent_end and took the run for finished; the
// auto_retry_start read after it reopened the run, which then "ended before
// its agent_end": failed (exit 1) instead of parked (75). Here the gap is
// made deterministic: pi's stdout goes through a relay that writes each
// attempt whole (up to its agent_end) in one write, then holds what follows
// for half a second, and lives through the stop's TERM to deliver it.
import { afterAll, expect, test } from "bun:test";
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema } from "../src/core/verdict.ts";
import { agentport, fakeProject, ROOT } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const RELAY = `#!/bin/sh
"$FAKE_PI" "$@" | (
  trap '' TERM
  buf=""
  while IFS= read -r line; do
    buf="$buf$line
"
    case "$line" in *'"type":"agent_end"'*) printf '%s' "$buf"; buf=""; sleep 0.5;; esac
  done
  printf '%s' "$buf"
)
`;

test("a wall stop caught up between a failed attempt's agent_end and pi's auto_retry_start: still parked (exit 75), not failed", async () => {
  const w = fakeProject("agentport-quota-race-");
  made.push(w.root);
  const relay = join(w.root, "bin", "relayed-pi");
  writeFileSync(relay, RELAY);
  chmodSync(relay, 0o755);
  const message = readFileSync(join(ROOT, "test", "fixtures", "pi", "quota", "usage-limit.txt"), "utf8").split("\n")[0];
  const scenario = { steps: [{ error: { status: 429, message, times: 4 } }], retrySleepMs: 60_000 };
  const ran = await agentport(["run", "--agent", "pi", "--json", "--progress", "off", "go"], {
    cwd: w.proj,
    env: { ...w.env, FAKE_PI: w.env.AGENTPORT_PI_BIN!, AGENTPORT_PI_BIN: relay, AGENTPORT_FAKE_SCENARIO: JSON.stringify(scenario) },
  });
  const verdict = ran.stdout.trim().startsWith("{") ? VerdictSchema.parse(JSON.parse(ran.stdout)) : null;
  expect({ code: ran.code, status: verdict?.status, fault: verdict?.fault?.kind, failure: verdict?.failure?.kind }).toEqual({
    code: 75,
    status: "parked",
    fault: "quota_wall",
    failure: "stopped",
  });
  expect(verdict?.resume_after).toBe(new Date(1777936568_000).toISOString());
}, 60_000);
