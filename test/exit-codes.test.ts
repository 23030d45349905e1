// Every kind of agentport's error (src/core/errors.ts), driven through the
// compiled binary, ends with the exit code the one table gives it and that the
// README's "Exit codes" documents, in one line.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EXIT_OF_KIND, type ErrorKind } from "../src/core/errors.ts";
import { agentport, BIN, fakeProject, type FakeProject } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function project(prefix: string, env: Record<string, string> = {}): FakeProject {
  const p = fakeProject(prefix, env);
  made.push(p.root);
  return p;
}

/** The README's exit code for a kind's meaning (its "Exit codes" table). */
const DOCUMENTED: Partial<Record<ErrorKind, number>> = {
  usage: 2,
  named_file: 2,
  refused: 3,
  environment: 5,
  planted_link: 5,
  ledger_unreachable: 5,
  ledger_damaged: 5,
  agent: 1,
};

async function sessionIds(p: FakeProject): Promise<string[]> {
  const listed = await agentport(["sessions", "--json"], { cwd: p.proj, env: p.env });
  return listed.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { id: string }).id);
}

const oneLine = (stderr: string): boolean => stderr.trim().split("\n").length === 1 && !/\n\s+at /.test(stderr);

describe("each error kind through the binary: its documented exit code, one line", () => {
  test("the table gives each kind the README's code", () => {
    for (const [kind, code] of Object.entries(DOCUMENTED)) expect(EXIT_OF_KIND[kind as ErrorKind]).toBe(code);
  });

  test("usage: an unknown command, a citty argument error (an enum, a missing positional)", async () => {
    const p = project("agentport-exit-usage-");
    for (const args of [["frobnicate"], ["run", "--agent", "nope", "hi"], ["show"]]) {
      const ran = await agentport(args, { cwd: p.proj, env: p.env });
      expect(ran.code).toBe(EXIT_OF_KIND.usage);
      expect(oneLine(ran.stderr)).toBe(true);
    }
    expect((await agentport(["show"], { cwd: p.proj, env: p.env })).stderr).toContain(
      "Missing required positional argument: ID (see --help)",
    );
  });

  test("named_file: a folder named as a stream to replay", async () => {
    const p = project("agentport-exit-file-");
    const ran = await agentport(["replay", "--agent", "claude", p.proj], { cwd: p.proj, env: p.env });
    expect(ran.code).toBe(EXIT_OF_KIND.named_file);
    expect(ran.stderr).toContain("a folder, not a file: name a regular file");
    expect(oneLine(ran.stderr)).toBe(true);
  });

  test("environment: a closed stdout", async () => {
    const ran = Bun.spawnSync(["sh", "-c", `exec "${BIN}" --version >&-`], { stderr: "pipe" });
    expect(ran.exitCode).toBe(EXIT_OF_KIND.environment);
    expect(ran.stderr.toString()).toContain("stdout is closed");
  });

  test("environment: a missing agent binary, not on the path given or not startable (SpawnError not_found): exit 5, fault missing_binary", async () => {
    const p = project("agentport-exit-nobin-");
    const gone = await agentport(["run", "--agent", "claude", "--claude-bin", join(p.root, "no-claude"), "--progress", "off", "hi"], {
      cwd: p.proj,
      env: p.env,
    });
    expect(gone.code).toBe(EXIT_OF_KIND.environment);
    expect(oneLine(gone.stderr)).toBe(true);
    // On disk, but its interpreter is not: the spawn itself fails with ENOENT.
    const script = join(p.root, "claude");
    writeFileSync(script, "#!/nonexistent/interpreter\n", { mode: 0o755 });
    const ran = await agentport(["run", "--agent", "claude", "--claude-bin", script, "--json", "--progress", "off", "hi"], {
      cwd: p.proj,
      env: p.env,
    });
    expect(ran.code).toBe(EXIT_OF_KIND.environment);
    expect(JSON.parse(ran.stdout)).toMatchObject({
      status: "failed",
      env_fault: true,
      fault: { kind: "missing_binary" },
      failure: { kind: "environment", message: `${script}: not found` },
    });
  });

  test("planted_link: the home's runs folder a symlink", async () => {
    const p = project("agentport-exit-link-");
    mkdirSync(p.env.AGENTPORT_HOME!, { recursive: true });
    mkdirSync(join(p.root, "elsewhere"));
    symlinkSync(join(p.root, "elsewhere"), join(p.env.AGENTPORT_HOME!, "runs"));
    const ran = await agentport(["prune", "--older-than", "30d"], { cwd: p.proj, env: p.env });
    expect(ran.code).toBe(EXIT_OF_KIND.planted_link);
    expect(ran.stderr).toContain("symbolic link");
  });

  test("ledger_unreachable: a PostgreSQL ledger nobody listens for, prefixed `ledger:`", async () => {
    const p = project("agentport-exit-pg-");
    const ran = await agentport(["sessions", "--ledger", "postgres://agentport:pw@127.0.0.1:1/ledger"], { cwd: p.proj, env: p.env });
    expect(ran.code).toBe(EXIT_OF_KIND.ledger_unreachable);
    expect(ran.stderr).toMatch(/ledger: .*unreachable/);
    expect(ran.stderr).not.toContain(":pw@");
  });

  test("ledger_damaged: a ledger whose pages were overwritten", async () => {
    const p = project("agentport-exit-damaged-");
    expect((await agentport(["run", "--agent", "claude", "--progress", "off", "hi"], { cwd: p.proj, env: p.env })).code).toBe(0);
    const file = join(p.env.AGENTPORT_HOME!, "ledger.sqlite");
    const bytes = new Uint8Array(await Bun.file(file).arrayBuffer());
    bytes.fill(0xab, 8192);
    writeFileSync(file, bytes);
    const ran = await agentport(["sessions"], { cwd: p.proj, env: p.env });
    expect(ran.code).toBe(EXIT_OF_KIND.ledger_damaged);
    expect(ran.stderr).toContain("ledger: database disk image is malformed (check it with agentport doctor");
    expect(oneLine(ran.stderr)).toBe(true);
  });

  test("refused: a resume of a session whose run is still going; then Ctrl-C of that run is 130", async () => {
    const p = project("agentport-exit-busy-", { AGENTPORT_FAKE_SCENARIO: "hang" });
    const running = Bun.spawn([BIN, "run", "--agent", "claude", "--progress", "off", "hi"], {
      cwd: p.proj,
      env: { ...process.env, NO_COLOR: "1", ...p.env },
      stdout: "ignore",
      stderr: "ignore",
    });
    try {
      let ids: string[] = [];
      for (let i = 0; i < 200 && ids.length === 0; i++) {
        await Bun.sleep(50);
        ids = await sessionIds(p);
      }
      expect(ids.length).toBe(1);
      const ran = await agentport(["resume", ids[0]!, "--json", "again"], { cwd: p.proj, env: p.env });
      expect(ran.code).toBe(EXIT_OF_KIND.refused);
      expect(JSON.parse(ran.stdout)).toMatchObject({ status: "refused" });
      running.kill("SIGINT");
      expect(await running.exited).toBe(130);
    } finally {
      running.kill("SIGKILL");
    }
  });
});
