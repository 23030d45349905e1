// The fleet: one PostgreSQL ledger (test/pg.ts) written by many processes on
// several "hosts" (separate homes with distinct machine ids), a resume from
// another host refused at zero model requests (the real claude against the
// Anthropic stand-in), a ledger unreachable at declare time refusing the run
// before the agent starts, `ledger copy` twice, `sessions --host` and the host
// column, and the URL's password in no output and nowhere in the ledger.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MACHINE_ID_FILE } from "../src/io/host.ts";
import { BIN, ROOT, agentport, fakeProject } from "./helpers.ts";
import { PG_PASSWORD, postgres, usePostgres } from "./pg.ts";
import { claudeEnv, startAnthropicStandin } from "./standins/anthropic.ts";
import { removeTempDirs, spawnCollect, tempDir, type Standin } from "./standins/util.ts";

const WORKER = join(import.meta.dir, "ledger-worker.ts");
const CLAUDE = join(ROOT, "node_modules", ".bin", "claude");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

const skip = usePostgres("test/ledger-fleet.test.ts");

/** A "host": its own home, with its own machine id. */
function host(root: string, name: string, machineId: string): string {
  const home = join(root, name);
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, MACHINE_ID_FILE), `${machineId}\n`);
  return home;
}

describe.skipIf(skip)("a PostgreSQL ledger for a fleet", () => {
  test("3 hosts × 8 processes × 200 declares and finishes into one ledger: nothing lost, no error", async () => {
    const url = await (await postgres()).fresh();
    const root = tempDir("agentport-fleet-");
    const hosts = ["a", "b", "c"].map((name, i) => ({ name, home: host(root, name, `${String(i + 1).repeat(8)}-fleet-host`) }));
    const started = performance.now();
    const workers = hosts.flatMap((h) =>
      Array.from({ length: 8 }, (_, i) =>
        Bun.spawn([process.execPath, WORKER, "hammer", h.home, "200", `${h.name}${i}`], {
          stdout: "pipe",
          stderr: "pipe",
          env: { ...process.env, AGENTPORT_LEDGER: url },
        }),
      ),
    );
    const results = await Promise.all(
      workers.map(async (w) => ({
        code: await w.exited,
        stdout: await new Response(w.stdout).text(),
        stderr: await new Response(w.stderr).text(),
      })),
    );
    const seconds = (performance.now() - started) / 1000;
    for (const r of results) expect(r).toEqual({ code: 0, stdout: "done 200\n", stderr: "" });
    console.log(
      `fleet: 24 writers × 200 declare+start+finish into PostgreSQL in ${seconds.toFixed(1)} s (${Math.round(4800 / seconds)} sessions/s)`,
    );

    const listed = await agentport(["sessions", "--ledger", url, "--json", "--home", join(root, "a")]);
    expect(listed.code).toBe(0);
    const sessions = listed.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(sessions).toHaveLength(4800);
    expect(new Set(sessions.map((s) => s.id)).size).toBe(4800);
    expect(sessions.every((s) => s.phases.length === 1 && s.phases[0].status === "completed" && s.totals.cost_micro_usd === 10)).toBe(true);
    const perHost = Object.groupBy(sessions, (s: { machine_id: string }) => s.machine_id);
    expect(Object.fromEntries(Object.entries(perHost).map(([k, v]) => [k, v?.length]))).toEqual({
      "11111111-fleet-host": 1600,
      "22222222-fleet-host": 1600,
      "33333333-fleet-host": 1600,
    });

    // The host column shows (three hosts, one hostname: the machine id tells them apart); --host picks one.
    const table = await agentport(["sessions", "--ledger", url, "--limit", "3", "--home", join(root, "a")]);
    // A header row, then the sessions.
    expect(table.stdout.trim().split("\n")).toHaveLength(4);
    expect(table.stdout).toStartWith("SESSION ");
    expect(table.stderr).toContain("… 4797 more (use --limit or --offset)");
    for (const line of table.stdout.trim().split("\n").slice(1)) expect(line).toMatch(/^\S+ +\S+ \((1{8}|2{8}|3{8})\) /);
    const onB = await agentport([
      "sessions",
      "--ledger",
      url,
      "--host",
      "22222222",
      "--json",
      "--limit",
      "2000",
      "--home",
      join(root, "a"),
    ]);
    const picked = onB.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(picked).toHaveLength(1600);
    expect(picked.every((s) => s.machine_id === "22222222-fleet-host")).toBe(true);
  }, 180_000);

  test("resume from another host is refused at zero model requests, naming both hosts; on its birth host it goes on", async () => {
    const url = await (await postgres()).fresh();
    const dir = tempDir("agentport-fleet-resume-");
    const project = join(dir, "project");
    mkdirSync(project);
    const standin = startAnthropicStandin([{ text: "First answer." }, { text: "Second answer." }]);
    standins.push(standin);
    const env = (home: string) => ({
      ...claudeEnv(dir, standin.url),
      AGENTPORT_HOME: home,
      AGENTPORT_CLAUDE_BIN: CLAUDE,
      AGENTPORT_LEDGER: url,
      AGENTPORT_CONFIG: "",
    });
    const born = host(dir, "host-born", "aaaaaaaa-birth-host");
    const other = host(dir, "host-other", "bbbbbbbb-other-host");
    const posts = () => standin.log.filter((r) => r.method === "POST").length;

    const first = await spawnCollect([BIN, "run", "--agent", "claude", "--json", "--progress", "off", "Say hello"], {
      cwd: project,
      env: env(born),
      timeoutMs: 60_000,
    });
    expect(first.code).toBe(0);
    const id = JSON.parse(first.stdout).session_id as string;
    const before = posts();
    expect(before).toBeGreaterThan(0);

    const refused = await spawnCollect([BIN, "resume", id, "--json", "--progress", "off", "Again"], {
      cwd: project,
      env: env(other),
      timeoutMs: 60_000,
    });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`session ${id} (claude) was born on host`);
    expect(refused.stderr).toContain("(aaaaaaaa) in");
    expect(refused.stderr).toContain("and this is host");
    expect(refused.stderr).toContain("(bbbbbbbb)");
    const verdict = JSON.parse(refused.stdout);
    expect(verdict).toMatchObject({
      status: "refused",
      cost_micro_usd: 0,
      tokens: { input: 0, output: 0 },
      summary: { birth_machine_id: "aaaaaaaa-birth-host" },
    });
    expect(posts()).toBe(before);

    const again = await spawnCollect([BIN, "resume", id, "--json", "--progress", "off", "Again"], {
      cwd: project,
      env: env(born),
      timeoutMs: 60_000,
    });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: "completed", text: "Second answer." });
    expect(posts()).toBeGreaterThan(before);
  }, 120_000);

  test("a ledger unreachable at declare time refuses the run before the agent starts (exit 5), without the password", async () => {
    const p = fakeProject("agentport-fleet-down-");
    const down = `postgres://agentport:${PG_PASSWORD}@127.0.0.1:1/ledger`;
    const ran = await agentport(["run", "--agent", "claude", "--ledger", down, "--json", "hi"], { cwd: p.proj, env: p.env });
    expect(ran.code).toBe(5);
    // --json prints its one verdict even before the agent: failed, environment, nothing spent.
    expect(JSON.parse(ran.stdout)).toMatchObject({
      status: "failed",
      ok: false,
      env_fault: true,
      failure: { kind: "environment" },
      cost_micro_usd: 0,
    });
    expect(ran.stdout).not.toContain(PG_PASSWORD);
    expect(ran.stderr).toContain("ledger: the ledger postgres://agentport:[redacted]@127.0.0.1:1/ledger is unreachable");
    expect(ran.stderr).not.toContain(PG_PASSWORD);
    expect(existsSync(p.log)).toBe(false); // the fake agent never started
  });

  test("ledger copy from a box's SQLite file into PostgreSQL, twice: the second copy changes nothing; sessions and import work on it", async () => {
    const url = await (await postgres()).fresh();
    const p = fakeProject("agentport-fleet-copy-");
    for (const prompt of ["one", "two", "three"]) {
      const ran = await agentport(["run", "--agent", "claude", "--progress", "off", prompt], { cwd: p.proj, env: p.env });
      expect(ran.code).toBe(0);
    }
    const local = await agentport(["sessions", "--json"], { cwd: p.proj, env: p.env });
    // One host in the ledger: no host column.
    const table = await agentport(["sessions"], { cwd: p.proj, env: p.env });
    expect(table.stdout.trim().split("\n")).toHaveLength(4);
    for (const line of table.stdout.trim().split("\n").slice(1)) expect(line).toMatch(/^\S+ +\d+s claude /);
    const copy = () => agentport(["ledger", "copy", "--to", url, "--json"], { cwd: p.proj, env: p.env });
    const once = await copy();
    expect(once.code).toBe(0);
    expect(JSON.parse(once.stdout)).toEqual({
      ledger: url.replace(`:${PG_PASSWORD}@`, ":[redacted]@"),
      sessions_added: 3,
      sessions_merged: 0,
      phases_added: 3,
      phases_finished: 0,
      phases_unchanged: 0,
    });
    const twice = await copy();
    expect(JSON.parse(twice.stdout)).toMatchObject({ sessions_added: 0, sessions_merged: 3, phases_added: 0, phases_unchanged: 3 });
    // The fleet's export is the box's, row for row.
    const remote = await agentport(["sessions", "--json", "--ledger", url], { cwd: p.proj, env: p.env });
    expect(remote.stdout).toBe(local.stdout);
    // import into PostgreSQL takes the same lines: all known already.
    const imported = await agentport(["import", "-", "--json", "--ledger", url], { cwd: p.proj, env: p.env, stdin: local.stdout });
    expect(JSON.parse(imported.stdout)).toMatchObject({ sessions_added: 0, sessions_merged: 3 });
    // And back: the fleet into a new SQLite file.
    const back = join(p.root, "back.sqlite");
    const home = await agentport(["ledger", "copy", "--ledger", url, "--to", `sqlite:${back}`, "--json"], { cwd: p.proj, env: p.env });
    expect(JSON.parse(home.stdout)).toMatchObject({ ledger: back, sessions_added: 3, phases_added: 3 });
  }, 60_000);

  test("the URL's password: in no output, not in config --json, nowhere in the ledger", async () => {
    const pg = await postgres();
    const url = await pg.fresh();
    const p = fakeProject("agentport-fleet-secret-", { AGENTPORT_LEDGER: url });
    const outputs = [
      await agentport(["run", "--agent", "claude", "--json", "--progress", "lines", "--verbose", "hi"], { cwd: p.proj, env: p.env }),
      await agentport(["config", "--json"], { cwd: p.proj, env: p.env }),
      await agentport(["config"], { cwd: p.proj, env: p.env }),
      await agentport(["sessions"], { cwd: p.proj, env: p.env }),
      await agentport(["sessions", "--json"], { cwd: p.proj, env: p.env }),
      await agentport(["doctor", "--json"], { cwd: p.proj, env: p.env }),
      await agentport(["ledger", "copy", "--ledger", `sqlite:${join(p.root, "none.sqlite")}`, "--to", url, "--json"], {
        cwd: p.proj,
        env: p.env,
      }),
      await agentport(["show", "nonexistent-id"], { cwd: p.proj, env: p.env }),
    ];
    expect(outputs[0]?.code).toBe(0);
    const config = JSON.parse(outputs[1]?.stdout ?? "{}");
    expect(config.settings.ledger).toEqual({ value: url.replace(`:${PG_PASSWORD}@`, ":[redacted]@"), source: "environment" });
    for (const o of outputs) expect(`${o.stdout}\n${o.stderr}`).not.toContain(PG_PASSWORD);
    // Every text value of every table, the runs folder and the state folder's files.
    const db = new URL(url).pathname.slice(1);
    const sql = new Bun.SQL(url.replace(/\/[^/]+$/, `/${db}`), { max: 1 });
    const dump = await sql.unsafe<{ t: string }[]>(
      `SELECT string_agg(row_to_json(x)::text, E'\\n') AS t FROM (SELECT * FROM sessions) x UNION ALL SELECT string_agg(row_to_json(y)::text, E'\\n') FROM (SELECT * FROM phases) y`,
    );
    await sql.close();
    const text = dump.map((d) => d.t ?? "").join("\n");
    expect(text).toContain(JSON.parse(outputs[0]?.stdout ?? "{}").session_id); // the dump holds the run
    expect(text).not.toContain(PG_PASSWORD);
    const state = Bun.spawnSync(["grep", "-rl", PG_PASSWORD, join(p.root, "state")]);
    expect(state.exitCode).toBe(1); // grep: no file holds it
    expect(existsSync(join(p.root, "state", "runs"))).toBe(true);
  }, 60_000);
});
