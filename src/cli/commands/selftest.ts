import { defineCommand } from "citty";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LineFramer, type LineSink } from "../../core/frame.ts";
import { runClaude } from "../../agents/claude-run.ts";
import type { RunOutcome } from "../../agents/phase.ts";
import { Ledger } from "../../io/ledger.ts";
import { installFake } from "../self.ts";
import { waitGone } from "../../io/proc.ts";
import { writeResult } from "../output.ts";
import { verbosityArgs } from "../common.ts";

interface Check {
  name: string;
  run: (ctx: Context) => Promise<void> | void;
}

interface Context {
  dir: string;
  claude: string;
  ledger: Ledger;
}

class CheckFailed extends Error {}

function expect(condition: boolean, what: string): void {
  if (!condition) throw new CheckFailed(what);
}

/** A fake claude run with a built-in scenario, in a fresh state folder. */
function fakeRun(ctx: Context, scenario: string, extra: { timeoutMs?: number; env?: Record<string, string> } = {}): Promise<RunOutcome> {
  return runClaude(ctx.ledger, {
    bin: ctx.claude,
    prompt: "selftest",
    cwd: ctx.dir,
    home: join(ctx.dir, "home"),
    maxLineBytes: 1024 * 1024,
    timeoutMs: extra.timeoutMs ?? 20_000,
    lingerMs: 500,
    graceMs: 500,
    env: { ...process.env, ...extra.env, AGENTPORT_FAKE_SCENARIO: scenario },
  });
}

const CHECKS: Check[] = [
  {
    name: "framing: LF only, CRLF, U+2028, split UTF-8, oversize skipped, unterminated last line",
    run() {
      const lines: string[] = [];
      const events: string[] = [];
      const sink: LineSink = {
        line: (t) => lines.push(t),
        oversize: (n) => events.push(`oversize(${n})`),
        framingError: (w) => events.push(`error:${w}`),
      };
      const framer = new LineFramer(sink, 16);
      const enc = new TextEncoder();
      const euro = enc.encode("€"); // three bytes, split across two chunks
      framer.push(enc.encode("a\r\nb\u2028c\n"));
      framer.push(euro.subarray(0, 1));
      framer.push(Uint8Array.of(...euro.subarray(1), 0x0a));
      framer.push(enc.encode(`${"x".repeat(40)}\nok\nrest`));
      framer.end();
      expect(lines.join("|") === "a|b\u2028c|€|ok", `lines were ${JSON.stringify(lines)}`);
      expect(events[0] === "oversize(16)", `events were ${JSON.stringify(events)}`);
      expect(events[1]?.startsWith("error:the last line has no LF") === true, `events were ${JSON.stringify(events)}`);
    },
  },
  {
    name: "claude: a successful run gives its final text and cost",
    async run(ctx) {
      const { verdict, exitCode } = await fakeRun(ctx, "tools");
      expect(exitCode === 0 && verdict.ok, `status ${verdict.status}: ${verdict.failure}`);
      expect(verdict.text === "Done.", `text was ${JSON.stringify(verdict.text)}`);
      expect(verdict.cost_micro_usd === 12300, `cost was ${verdict.cost_micro_usd}`);
      expect(verdict.summary.tool_errors === 1, "the failed tool call was not counted");
    },
  },
  {
    name: "claude: an API error after retries fails the run (exit 1)",
    async run(ctx) {
      const { verdict, exitCode } = await fakeRun(ctx, "api-error");
      expect(exitCode === 1 && verdict.status === "failed", `status ${verdict.status}, exit ${exitCode}`);
      expect((verdict.failure ?? "").includes("api_error_status 500"), `failure was ${verdict.failure}`);
      expect(verdict.summary.api_retries === 2, `retries were ${verdict.summary.api_retries}`);
    },
  },
  {
    name: "claude: a crash before the result fails with the stderr tail",
    async run(ctx) {
      const { verdict, exitCode } = await fakeRun(ctx, "crash");
      expect(exitCode === 1 && verdict.status === "failed", `status ${verdict.status}, exit ${exitCode}`);
      expect((verdict.failure ?? "").includes("Error: something broke"), `failure was ${verdict.failure}`);
    },
  },
  {
    name: "claude: a timeout kills the whole process group (exit 4)",
    async run(ctx) {
      const pidFile = join(ctx.dir, "grandchild.pid");
      const { verdict, exitCode } = await fakeRun(ctx, "hang", { timeoutMs: 1_000, env: { AGENTPORT_FAKE_PIDFILE: pidFile } });
      expect(exitCode === 4 && verdict.status === "timeout", `status ${verdict.status}, exit ${exitCode}`);
      const grandchild = Number(readFileSync(pidFile, "utf8"));
      // Killed with the group; give the kernel a moment to deliver the KILL.
      expect(grandchild > 0 && (await waitGone(grandchild, 2_000)), `the grandchild ${grandchild} is still alive`);
    },
  },
  {
    name: "claude: a process alive after its result is ended and its verdict kept",
    async run(ctx) {
      const { verdict, exitCode } = await fakeRun(ctx, "linger");
      expect(exitCode === 0 && verdict.ok, `status ${verdict.status}: ${verdict.failure}`);
      expect(verdict.summary.stopped_by === "linger", `stopped_by was ${verdict.summary.stopped_by}`);
    },
  },
];

export const selftestCommand = defineCommand({
  meta: {
    name: "selftest",
    description: "Prove the whole chain offline with zero tokens: the binary runs itself as a fake agent",
  },
  args: {
    json: { type: "boolean", description: "One JSON object per check on stdout" },
    ...verbosityArgs,
  },
  async run({ args }) {
    const dir = mkdtempSync(join(tmpdir(), "agentport-selftest-"));
    let failed = 0;
    try {
      const ctx: Context = { dir, claude: installFake(join(dir, "bin"), "fake-claude"), ledger: Ledger.open(join(dir, "home")) };
      for (const check of CHECKS) {
        const started = performance.now();
        let error: string | null = null;
        try {
          await check.run(ctx);
        } catch (e) {
          error = e instanceof CheckFailed ? e.message : `internal error: ${(e as Error).stack ?? e}`;
        }
        const ms = Math.round(performance.now() - started);
        if (error !== null) failed += 1;
        await writeResult(
          args.json
            ? JSON.stringify({ check: check.name, ok: error === null, ms, error })
            : `${error === null ? "ok  " : "FAIL"} ${check.name} (${ms} ms)${error === null ? "" : `: ${error}`}`,
        );
      }
      ctx.ledger.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    if (!args.json && !args.quiet) {
      process.stderr.write(failed === 0 ? `selftest: all ${CHECKS.length} checks passed\n` : `selftest: ${failed} of ${CHECKS.length} checks failed\n`);
    }
    return failed === 0 ? 0 : 1;
  },
});
