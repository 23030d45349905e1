// The capability probe under load: 16 cold `run --agent pi` at once on a new
// home probe pi once (a lock in the home; the others wait for the cached
// answer), a lock left by a killed agentport is taken over, and a probe that
// does not answer in time says it is a timeout.
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { capture, ProbeTimeout } from "../src/agents/pi/probe.ts";
import { agentport, fakeProject } from "./helpers.ts";

const versionCalls = (log: string): number =>
  readFileSync(log, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { fake: string; argv: string[] })
    .filter((r) => r.fake === "fake-pi" && r.argv.includes("--version")).length;

const piRun = ["run", "--agent", "pi", "--model", "fake/m", "--direct", "--json", "--progress", "off", "hi"];

describe("the pi capability probe", () => {
  test("16 cold runs at once on a new home all succeed, and pi is probed once", async () => {
    const p = fakeProject("agentport-probe-");
    const runs = await Promise.all(Array.from({ length: 16 }, () => agentport(piRun, { cwd: p.proj, env: p.env })));
    for (const r of runs) {
      if (r.code !== 0) throw new Error(`a run failed (exit ${r.code}): ${r.stderr.slice(0, 400)}`);
      expect(JSON.parse(r.stdout)).toMatchObject({ agent: "pi", status: "completed" });
    }
    expect(versionCalls(p.log)).toBe(1);
  }, 240_000);

  test("a lock left by a killed agentport is taken over", async () => {
    const p = fakeProject("agentport-probe-");
    const bin = realpathSync(p.env.AGENTPORT_PI_BIN!);
    const locks = join(p.env.AGENTPORT_HOME!, "locks");
    mkdirSync(locks, { recursive: true });
    const name = `probe-${createHash("sha256").update(bin).digest("hex").slice(0, 16)}.lock`;
    // A pid that cannot be running (above pid_max's default ceiling).
    writeFileSync(join(locks, name), "4999999 00000000-0000-0000-0000-000000000000:1\n");
    const ran = await agentport(piRun, { cwd: p.proj, env: p.env });
    expect(ran.code).toBe(0);
    expect(versionCalls(p.log)).toBe(1);
  });

  test("a probe command that does not answer in time is a timeout, said as one", async () => {
    const started = performance.now();
    const error = await capture(["sleep", "30"], process.env, 300).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProbeTimeout);
    expect((error as Error).message).toBe("`sleep 30` did not answer within 300 ms: timeout (is the machine overloaded?)");
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});
