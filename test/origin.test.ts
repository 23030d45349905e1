// A session the ledger never saw (started by hand, or before agentport) is
// still guarded: its birth folder comes from pi's session header or from
// claude's per-project transcript, and it is declared on first sight.
import { describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentport, tempDir } from "./helpers.ts";

describe("session origin outside the ledger", () => {
  test("pi: the header of *_<id>.jsonl in the session folder names the birth folder", async () => {
    const root = realpathSync(tempDir());
    const born = join(root, "born");
    const other = join(root, "other");
    mkdirSync(born);
    mkdirSync(other);
    const id = "01a22897-aaaa-7bbb-8ccc-000000000001";
    const sessions = join(root, "home", "pi-sessions");
    mkdirSync(sessions, { recursive: true });
    writeFileSync(
      join(sessions, `2026-11-29T10-00-00-000Z_${id}.jsonl`),
      `${JSON.stringify({ type: "session", version: 3, id, timestamp: "t", cwd: born })}\n`,
    );
    const ran = await agentport(["resume", id.slice(0, 13), "--cwd", other, "--pi-bin", "/nonexistent/pi", "again"], {
      env: { AGENTPORT_HOME: join(root, "home"), HOME: root },
    });
    expect(ran.code).toBe(3);
    expect(ran.stderr).toContain(`refused: session ${id} (pi) was born in ${born}, not in ${other}`);
    // Declared on first sight: the ledger knows it now.
    const shown = await agentport(["show", id, "--json"], { env: { AGENTPORT_HOME: join(root, "home"), HOME: root } });
    expect(JSON.parse(shown.stdout)).toMatchObject({ id, agent: "pi", cwd: born });
  });

  test("claude: a transcript under $CLAUDE_CONFIG_DIR/projects names the birth folder", async () => {
    const root = realpathSync(tempDir());
    const born = join(root, "born");
    const other = join(root, "other");
    mkdirSync(born);
    mkdirSync(other);
    const id = "d71c731d-0094-45d2-862d-989dc9e20619";
    const project = join(root, "claude", "projects", born.replace(/[^A-Za-z0-9]/g, "-"));
    mkdirSync(project, { recursive: true });
    writeFileSync(
      join(project, `${id}.jsonl`),
      `${JSON.stringify({ type: "user", cwd: born, sessionId: id, message: { role: "user", content: "hi" } })}\n`,
    );
    const env = { AGENTPORT_HOME: join(root, "home"), HOME: root, CLAUDE_CONFIG_DIR: join(root, "claude") };
    const ran = await agentport(["resume", id, "--cwd", other, "--claude-bin", "/nonexistent/claude", "again"], { env });
    expect(ran.code).toBe(3);
    expect(ran.stderr).toContain(`(claude) was born in ${born}`);
  });

  test("an unknown id is a usage error (exit 2) naming where it looked", async () => {
    const root = realpathSync(tempDir());
    const ran = await agentport(["resume", "no-such-session", "again"], {
      cwd: root,
      env: { AGENTPORT_HOME: join(root, "home"), HOME: root, CLAUDE_CONFIG_DIR: join(root, "c") },
    });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('no session "no-such-session" in the ledger');
  });

  test("an ambiguous prefix lists the candidates (exit 2)", async () => {
    const root = realpathSync(tempDir());
    const sessions = join(root, "home", "pi-sessions");
    mkdirSync(sessions, { recursive: true });
    for (const id of ["abcd1234-0000-7000-8000-000000000001", "abcd1234-0000-7000-8000-000000000002"]) {
      writeFileSync(join(sessions, `t_${id}.jsonl`), `${JSON.stringify({ type: "session", version: 3, id, timestamp: "t", cwd: root })}\n`);
    }
    const env = { AGENTPORT_HOME: join(root, "home"), HOME: root, CLAUDE_CONFIG_DIR: join(root, "c") };
    // Both get declared by name first, then the prefix is ambiguous in the ledger.
    await agentport(["resume", "abcd1234-0000-7000-8000-000000000001", "--cwd", "/", "x"], { env });
    await agentport(["resume", "abcd1234-0000-7000-8000-000000000002", "--cwd", "/", "x"], { env });
    const ran = await agentport(["resume", "abcd1234", "x"], { cwd: root, env });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('"abcd1234" matches 2 sessions');
  });
});
