// `bon --agent opencode --serve --timeout T --grace D` (issue #27 item 2)
// with the fake `opencode serve`: one server, the prime and each arm a session
// of it (the arms forks of the prime), each playing its own script. At T − D
// each arm still running is posted the wrap-up into its busy session (as
// `run --serve` does); the fake takes it at its next step and finishes, or,
// deep in one long step, does not and is stopped at T. The harvest says per
// arm whether the wrap-up was sent and whether the arm finished in the grace.
// bon's one-shot opencode arms (`opencode run`) take no message: refused.
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bon, box, readHarvest, useFakePi, type Box } from "./bon-fixture.ts";
import { BIN } from "./helpers.ts";

useFakePi();

/** The fake opencode, and a script per session the server plays (0 the prime, then the arms in order). */
function served(b: Box, sessions: unknown[][]): Record<string, string> {
  const dir = join(b.root, "serve-scenarios");
  mkdirSync(dir, { recursive: true });
  for (const [n, steps] of sessions.entries()) writeFileSync(join(dir, `${n}.json`), JSON.stringify({ steps }));
  const fake = join(dir, "fake-opencode");
  symlinkSync(BIN, fake);
  return { AGENTPORT_OPENCODE_BIN: fake, AGENTPORT_FAKE_SERVE_SCENARIOS: dir };
}

/** The final message: what it says, then the envelope in its fenced json block. */
const ok = (summary: string) => [
  { text: `${summary}\n\n\`\`\`json\n${JSON.stringify({ status: "success", summary, changed_files: [] })}\n\`\`\`` },
  { done: true },
];
// Work in one-second steps, as an agent's loop does: a message is taken between two.
const working = [{ text: "Working." }, ...Array.from({ length: 30 }, () => ({ sleep: 1000 })), ...ok("Finished the long way.")];
// One long step past the timeout: the wrap-up waits behind it.
const deaf = [{ text: "Working." }, { sleep: 60_000 }, ...ok("Too late.")];

test("--serve --timeout 8 --grace 5: before the grace point no wrap-up; told at 3 s, one arm finishes in the grace, one ignores it and times out", async () => {
  const b = box();
  const env = served(b, [ok("Read the spec."), ok("Done at once."), working, deaf]);
  const started = performance.now();
  const ran = await bon(b, [b.spec, "--agent", "opencode", "--serve", "--arms", "3", "--timeout", "8", "--grace", "5", "--json"], env);
  const seconds = (performance.now() - started) / 1000;
  if (!ran.stdout.trim().startsWith("{")) throw new Error(`exit ${ran.code}: ${ran.stderr}`);
  const h = readHarvest(ran.stdout);
  const row = (k: number) => {
    const a = h.arms.find((x) => x.arm === k)!;
    return { status: a.status, wrap_up: a.wrap_up, wrap_up_finished: a.wrap_up_finished };
  };
  expect({ sessions: h.sessions, arms: [1, 2, 3].map(row) }).toEqual({
    sessions: "server",
    arms: [
      { status: "completed", wrap_up: null, wrap_up_finished: null },
      { status: "completed", wrap_up: "timeout", wrap_up_finished: true },
      { status: "timeout", wrap_up: "timeout", wrap_up_finished: false },
    ],
  });
  // Arm 2 finished well before its 30 s of work: at the wrap-up, not the long way.
  expect(seconds).toBeLessThan(30);
}, 90_000);

test("bon's one-shot opencode arms (`opencode run`) refuse --grace before anything starts (exit 2, one line naming --serve)", async () => {
  const b = box();
  const ran = await bon(b, [b.spec, "--agent", "opencode", "--timeout", "8", "--grace", "5"], served(b, []));
  expect(ran.code).toBe(2);
  expect(ran.stderr.trim().split("\n")).toHaveLength(1);
  expect(ran.stderr).toMatch(/opencode run is one-shot .*takes no message while it runs; use --serve/);
  expect(existsSync(join(b.home, "ledger.sqlite"))).toBe(false);
});
