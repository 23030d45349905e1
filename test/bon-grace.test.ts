// `bon --timeout T --grace D` on pi's RPC arms (issue #27 item 2): at T − D
// each turn still running is sent the wrap-up through pi's `steer`; the fake
// pi queues it as pi 0.73.1 does and gives it to the model before its next
// step, where a script finishes on it (`steered`) or goes on as if it had
// not read it. The harvest says per arm whether the wrap-up was sent and
// whether the arm finished in the grace; an agent whose bon sessions take no
// message refuses --grace before anything starts.
import { expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WRAP_UP } from "../src/core/deadline.ts";
import { bon, box, envelope, MODEL, PRIME, readHarvest, useFakePi, type Box } from "./bon-fixture.ts";
import { BIN } from "./helpers.ts";

useFakePi();

/** A pi that plays one whole scenario per phase ($AGENTPORT_PHASE: prime, arm-k), each arm a process of its own. */
function scenarios(b: Box, phases: Record<string, { steps: unknown[]; steered?: unknown[] }>): string {
  const dir = join(b.root, "scenarios");
  mkdirSync(dir, { recursive: true });
  for (const [name, s] of Object.entries(phases))
    writeFileSync(join(dir, `${name}.json`), JSON.stringify({ turns: [s.steps], ...(s.steered ? { steered: s.steered } : {}) }));
  symlinkSync(BIN, join(dir, "fake-pi"));
  const wrapper = join(dir, "pi");
  writeFileSync(wrapper, `#!/bin/sh\nAGENTPORT_FAKE_SCENARIO="${dir}/\${AGENTPORT_PHASE:-prime}.json" exec "${dir}/fake-pi" "$@"\n`);
  chmodSync(wrapper, 0o755);
  return wrapper;
}

const write42 = { writeFile: { path: "answer.txt", content: "42\n" } };
const done = envelope("Wrote answer.txt.", ["answer.txt"]);
/** Working: a read, a slow step past the wrap-up (4.5 s), a bash, then a step past the timeout. */
const slow = [
  { tool: { name: "read", args: { path: "specs/task.md" }, result: "# Task\n" } },
  { sleep: 4_500 },
  { tool: { name: "bash", args: { command: "true" }, result: "" } },
  { sleep: 60_000 },
  write42,
  done,
];
const GATE = ["--gate", "grep -qx 42 answer.txt"];

test("--timeout 8 --grace 5: before the grace point no wrap-up; told at 3 s, one arm finishes in the grace, one ignores it and times out", async () => {
  const b = box();
  const pi = scenarios(b, {
    prime: { steps: PRIME },
    "arm-1": { steps: [write42, done] },
    "arm-2": { steps: slow, steered: [write42, done] },
    "arm-3": { steps: slow },
  });
  const started = performance.now();
  const ran = await bon(b, [b.spec, ...MODEL, ...GATE, "--arms", "3", "--parallel", "--timeout", "8", "--grace", "5", "--json"], {
    AGENTPORT_PI_BIN: pi,
  });
  const seconds = (performance.now() - started) / 1000;
  if (!ran.stdout.trim().startsWith("{")) throw new Error(`exit ${ran.code}: ${ran.stderr}`);
  const h = readHarvest(ran.stdout);
  const row = (k: number) => {
    const a = h.arms.find((x) => x.arm === k)!;
    return { verdict: a.verdict, status: a.status, wrap_up: a.wrap_up, wrap_up_finished: a.wrap_up_finished };
  };
  expect({ code: ran.code, arms: [1, 2, 3].map(row) }).toEqual({
    code: 0,
    arms: [
      { verdict: "green", status: "completed", wrap_up: null, wrap_up_finished: null },
      { verdict: "green", status: "completed", wrap_up: "timeout", wrap_up_finished: true },
      { verdict: "red", status: "timeout", wrap_up: "timeout", wrap_up_finished: false },
    ],
  });
  // pi got the wrap-up as a user message of the arm's session, whether the model acted on it or not.
  for (const k of [2, 3]) expect(readFileSync(h.arms.find((x) => x.arm === k)!.session_file!, "utf8")).toContain(WRAP_UP.timeout);
  expect(readFileSync(h.arms.find((x) => x.arm === 1)!.session_file!, "utf8")).not.toContain(WRAP_UP.timeout);
  expect(seconds).toBeLessThan(40);
}, 90_000);

test("a grace not shorter than the timeout is refused before anything starts (exit 2)", async () => {
  const b = box();
  const ran = await bon(b, [b.spec, ...MODEL, "--arms", "2", "--timeout", "5", "--grace", "5"]);
  expect(ran.code).toBe(2);
  expect(ran.stderr).toContain("must be shorter than the timeout");
  expect(existsSync(join(b.home, "ledger.sqlite"))).toBe(false);
});

test("an arm whose agent takes no message refuses --grace (exit 2, one line naming it and what to use), a mixed --arms list too", async () => {
  const b = box();
  const mixed = await bon(b, [b.spec, "--arms", "claude,pi", "--grace", "5"]);
  expect(mixed.code).toBe(2);
  expect(mixed.stderr.trim().split("\n")).toHaveLength(1);
  expect(mixed.stderr).toMatch(/claude .*no wrap-up can be told; use --tell-deadline/);
  expect(existsSync(join(b.home, "ledger.sqlite"))).toBe(false);
});
