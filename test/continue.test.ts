// `run --continue` / `-c` and `resume --last` take the latest session born in
// this folder; a failed, stopped or interrupted run ends with the exact
// command that resumes it. Through the compiled binary and its fake agents.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { agentport, BIN, fakeProject, type FakeProject } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function project(): FakeProject {
  const w = fakeProject("agentport-continue-");
  made.push(w.root);
  return w;
}

const run = (w: FakeProject, args: string[], env: Record<string, string> = {}, cwd = w.proj) =>
  agentport(args, { cwd, env: { ...w.env, ...env } });
const lastLine = (stderr: string): string => stderr.trimEnd().split("\n").at(-1) ?? "";

async function phases(w: FakeProject, id: string): Promise<number> {
  const shown = await run(w, ["show", id, "--json"]);
  return (JSON.parse(shown.stdout) as { phases: unknown[] }).phases.length;
}

describe("the resume command after a run that did not complete", () => {
  test("a failed run ends with it, and it resumes the session", async () => {
    const w = project();
    const failed = await run(w, ["run", "--agent", "claude", "--json", "hello"], { AGENTPORT_FAKE_SCENARIO: "api-error" });
    expect(failed.code).toBe(1);
    const id = (JSON.parse(failed.stdout) as { session_id: string }).session_id;
    expect(lastLine(failed.stderr)).toBe(`[info] to resume: agentport resume ${id} "<next prompt>"`);
    const again = await run(w, ["resume", id, "go on"]);
    expect(again.code).toBe(0);
    expect(await phases(w, id)).toBe(2);
  });

  test("from another folder it names the birth folder, and the state folder given", async () => {
    const w = project();
    const state = join(w.root, "elsewhere-state");
    const failed = await run(
      w,
      ["run", "--agent", "claude", "--json", "--cwd", w.proj, "--home", state, "hello"],
      { AGENTPORT_FAKE_SCENARIO: "auth-error" },
      w.root,
    );
    const id = (JSON.parse(failed.stdout) as { session_id: string }).session_id;
    expect(lastLine(failed.stderr)).toBe(`[info] to resume: agentport resume ${id} --cwd ${w.proj} --home ${state} "<next prompt>"`);
  });

  test("a run stopped by its timeout ends with it", async () => {
    const w = project();
    const stopped = await run(w, ["run", "--agent", "claude", "--timeout", "1", "hello"], {
      AGENTPORT_FAKE_SCENARIO: JSON.stringify({ steps: [{ text: "working" }, { hang: true }] }),
    });
    expect(stopped.code).toBe(4);
    expect(lastLine(stopped.stderr)).toMatch(/^\[info\] to resume: agentport resume [0-9a-f-]{36} "<next prompt>"$/);
  });

  test("an interrupted run ends with it", async () => {
    const w = project();
    const proc = Bun.spawn([BIN, "run", "--agent", "claude", "hello"], {
      cwd: w.proj,
      env: {
        ...process.env,
        ...w.env,
        NO_COLOR: "1",
        AGENTPORT_FAKE_SCENARIO: JSON.stringify({ steps: [{ text: "working" }, { hang: true }] }),
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    const runs = join(w.env.AGENTPORT_HOME!, "runs");
    for (let i = 0; i < 500 && !(existsSync(runs) && readdirSync(runs).length > 0); i++) await Bun.sleep(10);
    await Bun.sleep(300);
    proc.kill("SIGINT");
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect(code).toBe(130);
    expect(lastLine(stderr)).toMatch(/^\[info\] to resume: agentport resume [0-9a-f-]{36} "<next prompt>"$/);
  });

  test("a completed run does not", async () => {
    const w = project();
    const ok = await run(w, ["run", "--agent", "claude", "hello"]);
    expect(ok.code).toBe(0);
    expect(ok.stderr).not.toContain("to resume");
  });
});

describe("run --continue and resume --last", () => {
  test("-c takes the latest session of this folder, of the agent named or of any", async () => {
    const w = project();
    const first = JSON.parse((await run(w, ["run", "--agent", "claude", "--json", "one"])).stdout).session_id as string;
    const second = JSON.parse((await run(w, ["run", "--agent", "pi", "--json", "two"])).stdout).session_id as string;
    // Born elsewhere: never taken.
    const other = join(w.proj, "sub");
    mkdirSync(other);
    await run(w, ["run", "--agent", "claude", "three"], {}, other);

    const any = await run(w, ["run", "-c", "--json", "go on"]);
    expect(any.code).toBe(0);
    expect(JSON.parse(any.stdout)).toMatchObject({ session_id: second, agent: "pi" });

    const claude = await run(w, ["run", "--continue", "--agent", "claude", "--json", "go on"]);
    expect(claude.code).toBe(0);
    expect(JSON.parse(claude.stdout)).toMatchObject({ session_id: first, agent: "claude" });
    expect(await phases(w, first)).toBe(2);
  });

  test("resume --last: every word is the prompt", async () => {
    const w = project();
    const id = JSON.parse((await run(w, ["run", "--agent", "claude", "--json", "one"])).stdout).session_id as string;
    const last = await run(w, ["resume", "--last", "--json", "go", "on"]);
    expect(last.code).toBe(0);
    expect(JSON.parse(last.stdout)).toMatchObject({ session_id: id });
    expect(await phases(w, id)).toBe(2);
  });

  test("no session born here: one line, exit 2, nothing run", async () => {
    const w = project();
    const none = await run(w, ["run", "-c", "go on"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe(`[error] no session was born in ${w.proj} on this host: start one with agentport run\n`);
    const noPi = await run(w, ["resume", "--last", "go on"]);
    expect(noPi.code).toBe(2);
  });
});
