// The ledger's password never reaches an agent: a PostgreSQL URL in
// $AGENTPORT_LEDGER is what agentport records to, and the agent (which runs
// an untrusted repository's code) inherits the variable for a nested
// agentport, but without the password, through the compiled binary and a real
// PostgreSQL (test/pg.ts).
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { agentport, fakeProject } from "./helpers.ts";
import { PG_PASSWORD, postgres, stopPostgres, usePostgres } from "./pg.ts";

afterAll(stopPostgres);
const skip = usePostgres("test/ledger-env-secret.test.ts");

describe.skipIf(skip)("$AGENTPORT_LEDGER with a password", () => {
  test("the run records to it; the agent gets the URL without its password, and the password is nowhere in what it saw", async () => {
    const url = await (await postgres()).fresh();
    expect(url).toContain(`:${PG_PASSWORD}@`);
    const w = fakeProject("agentport-ledger-env-", { AGENTPORT_FAKE_LOG_ENV: "AGENTPORT_LEDGER", AGENTPORT_FAKE_SCENARIO: "text" });
    const env = { ...w.env, AGENTPORT_LEDGER: url };
    const ran = await agentport(["run", "--json", "--progress", "off", "hi"], { cwd: w.proj, env });
    expect(ran.code).toBe(0);
    const seen = readFileSync(w.log, "utf8");
    expect(seen).not.toContain(PG_PASSWORD);
    const last = JSON.parse(seen.trim().split("\n").at(-1) ?? "{}").env as Record<string, string | null>;
    expect(last.AGENTPORT_LEDGER).toBe(url.replace(`:${PG_PASSWORD}@`, "@"));
    // The session is in that ledger: the run recorded to the URL with its password.
    const listed = await agentport(["sessions", "--json"], { cwd: w.proj, env });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout.trim().split("\n")[0]!).id).toBe(JSON.parse(ran.stdout).session_id);
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
