import { defineCommand } from "citty";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installFake } from "../self.ts";
import { FAKE_NAMES, type FakeName } from "../../core/agents.ts";
import { CheckFailed } from "../selftest-agents.ts";
import { CHECKS, type Check, type Context } from "../selftest-checks.ts";
import { writeResult } from "../output.ts";
import { writeStderr } from "../fd-out.ts";
import { verbosityArgs } from "../common.ts";

// The self-gate before a run: offline, zero tokens, no agent installed. The
// binary runs itself as the fake agents; every check gets its own state
// folder, so checks run side by side and the user's ledger is never touched.

interface Outcome {
  name: string;
  ok: boolean;
  ms: number;
  error: string | null;
}

async function runCheck(check: Check, root: string, index: number, fakes: Record<FakeName, string>): Promise<Outcome> {
  const dir = join(root, `check-${index}`);
  mkdirSync(dir);
  const ctx: Context = { dir: realpathSync(dir), home: join(dir, "home"), claude: fakes["fake-claude"], pi: fakes["fake-pi"], fakes };
  const started = performance.now();
  let error: string | null = null;
  try {
    const pending = check.run(ctx);
    // A check runs alongside the others: time a synchronous one on its own.
    if (pending instanceof Promise) await pending;
  } catch (e) {
    error = e instanceof CheckFailed ? e.message : `internal error: ${(e as Error).stack ?? e}`;
  }
  return { name: check.name, ok: error === null, ms: Math.round(performance.now() - started), error };
}

export const selftestCommand = defineCommand({
  meta: {
    name: "selftest",
    description: "The self-gate before a run: proves the whole chain offline with zero tokens; the binary runs itself as the fake agents",
  },
  args: {
    json: { type: "boolean", description: "One JSON object on stdout: {ok, checks: [{name, ok, ms, error}], ms}" },
    ...verbosityArgs,
  },
  async run({ args }) {
    const started = performance.now();
    const root = mkdtempSync(join(tmpdir(), "agentport-selftest-"));
    let outcomes: Outcome[];
    try {
      const bin = join(root, "bin");
      const fakes = Object.fromEntries(FAKE_NAMES.map((name) => [name, installFake(bin, name)])) as Record<FakeName, string>;
      outcomes = await Promise.all(CHECKS.map((check, i) => runCheck(check, root, i, fakes)));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
    const failed = outcomes.filter((o) => !o.ok).length;
    const total = Math.round(performance.now() - started);
    if (args.json) {
      await writeResult(
        JSON.stringify({
          ok: failed === 0,
          checks: outcomes.map((o) => ({ name: o.name, ok: o.ok, ms: o.ms, error: o.error })),
          ms: total,
        }),
      );
    } else {
      for (const o of outcomes) await writeResult(`${o.ok ? "ok  " : "FAIL"} ${o.name} (${o.ms} ms)${o.ok ? "" : `: ${o.error}`}`);
    }
    if (!args.json && !args.quiet) {
      writeStderr(
        failed === 0
          ? `selftest: all ${CHECKS.length} checks passed in ${total} ms\n`
          : `selftest: ${failed} of ${CHECKS.length} checks failed\n`,
      );
    }
    return failed === 0 ? 0 : 1;
  },
});
