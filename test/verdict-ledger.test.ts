// What a run changed and what it left behind are kept in the ledger (migration 13),
// on SQLite and on PostgreSQL: through the compiled binary with the fake claude, a
// tool step that edits a file and double-forks a `setsid sleep` in a git folder;
// `show ID --json`, `sessions --json` and `show ID` show `changes` and `reaped`.
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema } from "../src/core/verdict.ts";
import { agentport, fakeClaudeDir } from "./helpers.ts";
import { postgres, usePostgres } from "./pg.ts";

let root: string;
let claude: string;
beforeAll(() => {
  ({ dir: root, claude } = fakeClaudeDir("agentport-verdict-ledger-"));
});

function repo(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  const git = (...argv: string[]) => Bun.spawnSync(["git", ...argv], { cwd: dir, stdout: "ignore", stderr: "ignore" });
  git("init", "-q");
  writeFileSync(join(dir, "a.txt"), "one\ntwo\n");
  git("add", "-A");
  git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init");
  return dir;
}

const command = "printf 'one\\nTWO\\nthree\\n' > a.txt; sh -c 'setsid sleep 1000 >/dev/null 2>&1 &'";
const scenario = JSON.stringify({
  steps: [{ tool: { name: "Bash", input: { command }, run: command } }, { text: "Done." }, { result: {} }],
});

async function check(name: string, env: Record<string, string>) {
  const cwd = repo(name);
  const full = { AGENTPORT_HOME: join(root, `home-${name}`), AGENTPORT_CONFIG: "", ...env };
  const ran = await agentport(["run", "--claude-bin", claude, "--json", "--progress", "off", "go"], {
    cwd,
    env: { ...full, AGENTPORT_FAKE_SCENARIO: scenario },
  });
  const verdict = VerdictSchema.parse(JSON.parse(ran.stdout));
  const changes = { files: 1, insertions: 2, deletions: 1 };
  expect({ code: ran.code, changes: verdict.changes, reaped: verdict.summary.reaped }).toEqual({ code: 0, changes, reaped: 1 });

  const shown = await agentport(["show", verdict.session_id!, "--json"], { cwd, env: full });
  expect(JSON.parse(shown.stdout).phases[0]).toMatchObject({ changes, reaped: 1 });
  const listed = await agentport(["sessions", "--json"], { cwd, env: full });
  expect(JSON.parse(listed.stdout.trim().split("\n")[0]!).phases[0]).toMatchObject({ changes, reaped: 1 });
  const human = await agentport(["show", verdict.session_id!], { cwd, env: full });
  expect(human.stdout).toContain("changed 1 file (+2 -1) · reaped 1");
}

describe.if(process.platform === "linux")("changes and reaped in the ledger", () => {
  test("SQLite", async () => {
    await check("sqlite", {});
  });

  test.skipIf(usePostgres("test/verdict-ledger.test.ts"))("PostgreSQL", async () => {
    await check("postgres", { AGENTPORT_LEDGER: await (await postgres()).fresh() });
  });
});
