// A file the user names that cannot be read (no permission, a folder) is one
// line and exit 2, never a stack trace: --append-system-prompt @FILE and replay.
// Root reads any file, so as root the binary runs as nobody (setpriv).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, tempDir } from "./helpers.ts";

let root: string;
let locked: string;

beforeAll(() => {
  root = tempDir("agentport-user-files-");
  chmodSync(root, 0o755);
  locked = join(root, "locked.md");
  writeFileSync(locked, "house rules");
  chmodSync(locked, 0o000);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function asUser(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const asNobody = process.getuid?.() === 0 ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : [];
  const proc = Bun.spawn([...asNobody, BIN, ...args], {
    cwd: root,
    env: { PATH: "/usr/bin:/bin", HOME: join(root, "home"), AGENTPORT_HOME: join(root, "state"), NO_COLOR: "1" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

const cases: [string, (r: string) => string[], RegExp][] = [
  [
    "an unreadable @FILE",
    (r) => ["run", "--agent", "claude", "--append-system-prompt", `@${join(r, "locked.md")}`, "hi"],
    /^\[error\] --append-system-prompt @.*locked\.md: permission denied \(make it readable\)\n$/,
  ],
  [
    "a folder as @FILE",
    () => ["run", "--agent", "claude", "--append-system-prompt", "@/tmp", "hi"],
    /^\[error\] --append-system-prompt @\/tmp: a folder, not a file: name a regular file\n$/,
  ],
  [
    "replay of an unreadable file",
    (r) => ["replay", join(r, "locked.md")],
    /^\[error\] .*locked\.md: permission denied \(make it readable\)\n$/,
  ],
  ["replay of a folder", () => ["replay", "/tmp"], /^\[error\] \/tmp: a folder, not a file: name a regular file\n$/],
  [
    "an unreadable --schema",
    (r) => ["run", "--agent", "claude", "--schema", join(r, "locked.md"), "hi"],
    /^\[error\] --schema .*locked\.md: permission denied \(make it readable\)\n$/,
  ],
  [
    "a folder as --schema",
    () => ["run", "--agent", "claude", "--schema", "/tmp", "hi"],
    /^\[error\] --schema \/tmp: a folder, not a file: name a regular file\n$/,
  ],
];

describe("a file the user names and agentport cannot read", () => {
  for (const [name, args, line] of cases) {
    test(`${name}: one line, exit 2`, async () => {
      const ran = await asUser(args(root));
      expect(ran.stderr).toMatch(line);
      expect(ran.stderr).not.toContain("    at ");
      expect(ran.code).toBe(2);
      expect(ran.stdout).toBe("");
    });
  }

  test("with --json the verdict's failure is that line, no stack", async () => {
    const ran = await asUser(["run", "--agent", "claude", "--json", "--append-system-prompt", `@${locked}`, "hi"]);
    expect(ran.code).toBe(2);
    const verdict = JSON.parse(ran.stdout) as { failure: { message: string } };
    expect(verdict.failure.message).toMatch(/locked\.md: permission denied/);
    expect(verdict.failure.message).not.toContain(" at ");
  });
});
