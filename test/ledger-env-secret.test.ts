// agentport's own variables stay with agentport (issue 24, item 8): the
// ledger's URL in $AGENTPORT_LEDGER, PGPASSWORD and every PG* and
// AGENTPORT_* variable never reach the agent unless the user passes one on by
// name (--env-allow NAME), and the URL's password never does. Through the
// compiled binary and a real PostgreSQL (test/pg.ts).
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { agentport, fakeProject } from "./helpers.ts";
import { PG_PASSWORD, postgres, stopPostgres, usePostgres } from "./pg.ts";

afterAll(stopPostgres);
const skip = usePostgres("test/ledger-env-secret.test.ts");

describe.skipIf(skip)("$AGENTPORT_LEDGER with a password", () => {
  test("the run records to it; the agent gets neither the URL nor PGPASSWORD nor any PG* or AGENTPORT_* variable", async () => {
    const url = await (await postgres()).fresh();
    expect(url).toContain(`:${PG_PASSWORD}@`);
    const own = ["AGENTPORT_LEDGER", "AGENTPORT_HOME", "AGENTPORT_CLAUDE_BIN", "AGENTPORT_PHASE", "PGPASSWORD", "PGHOST", "PGUSER"];
    const w = fakeProject("agentport-ledger-env-", {
      AGENTPORT_FAKE_LOG_ENV: [...own, "AGENTPORT_FAKE_SCENARIO"].join(","),
      AGENTPORT_FAKE_SCENARIO: "text",
    });
    const env = {
      ...w.env,
      AGENTPORT_LEDGER: url,
      AGENTPORT_PHASE: "outer",
      PGPASSWORD: PG_PASSWORD,
      PGHOST: "127.0.0.1",
      PGUSER: "agentport",
    };
    const ran = await agentport(["run", "--json", "--progress", "off", "hi"], { cwd: w.proj, env });
    expect(ran.code).toBe(0);
    const seen = readFileSync(w.log, "utf8");
    expect(seen).not.toContain(PG_PASSWORD);
    const last = JSON.parse(seen.trim().split("\n").at(-1) ?? "{}").env as Record<string, string | null>;
    for (const name of own) expect(last[name]).toBeNull();
    // The fakes' own settings are theirs: they pass.
    expect(last.AGENTPORT_FAKE_SCENARIO).toBe("text");
    // The session is in that ledger: the run recorded to the URL with its password.
    const listed = await agentport(["sessions", "--json"], { cwd: w.proj, env });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout.trim().split("\n")[0]!).id).toBe(JSON.parse(ran.stdout).session_id);
  }, 60_000);

  test("--env-allow passes one on by name: the ledger's URL without its password, PGPASSWORD as it is", async () => {
    const url = await (await postgres()).fresh();
    const w = fakeProject("agentport-ledger-env-", {
      AGENTPORT_FAKE_LOG_ENV: "AGENTPORT_LEDGER,PGPASSWORD,PGHOST",
      AGENTPORT_FAKE_SCENARIO: "text",
    });
    const env = { ...w.env, AGENTPORT_LEDGER: url, PGPASSWORD: PG_PASSWORD, PGHOST: "127.0.0.1" };
    const ran = await agentport(
      ["run", "--json", "--progress", "off", "--env-allow", "AGENTPORT_LEDGER", "--env-allow", "PGPASSWORD", "hi"],
      { cwd: w.proj, env },
    );
    expect(ran.code).toBe(0);
    const last = JSON.parse(readFileSync(w.log, "utf8").trim().split("\n").at(-1) ?? "{}").env as Record<string, string | null>;
    expect(last).toEqual({ AGENTPORT_LEDGER: url.replace(`:${PG_PASSWORD}@`, "@"), PGPASSWORD: PG_PASSWORD, PGHOST: null });
  }, 60_000);
});

describe("a ledger password with `@` in it (postgres://u:p@ss@host/db)", () => {
  test("neither `config --json` nor the unreachable ledger's error shows any of it", async () => {
    const tail = `Tail${crypto.randomUUID().slice(0, 8)}`;
    const url = `postgres://app:pw@${tail}@127.0.0.1:1/db`;
    const w = fakeProject("agentport-ledger-at-");
    const env = { ...w.env, AGENTPORT_LEDGER: url };
    const config = await agentport(["config", "--json"], { cwd: w.proj, env });
    expect(config.code).toBe(0);
    expect(JSON.parse(config.stdout).settings.ledger.value).toBe("postgres://app:[redacted]@127.0.0.1:1/db");
    const listed = await agentport(["sessions"], { cwd: w.proj, env });
    expect(listed.code).not.toBe(0);
    expect(listed.stderr).toContain("127.0.0.1");
    for (const out of [config.stdout, config.stderr, listed.stdout, listed.stderr]) expect(out).not.toContain(tail);
  }, 60_000);
});
