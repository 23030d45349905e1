// The agent's final text and progress on a terminal (issue 12, item 10),
// through the compiled binary and the fake claude: to a pipe the answer goes
// out byte for byte; on a terminal (`script` gives one) colour is kept and
// every other escape sequence and control character is removed; progress
// never carries bidi overrides or zero-width characters.
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { agentport, BIN, fakeProject, type FakeProject } from "./helpers.ts";
import { terminalText } from "../src/core/text.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const ESC = "\u001b";
const SCRIPT = Bun.which("script");
// Colour, a title change, a screen clear, a cursor move, a bell, a carriage-return overwrite, a C1 CSI.
const ANSWER = `${ESC}[32mgreen${ESC}[0m ${ESC}]0;owned${ESC}\\${ESC}[2J${ESC}[10;1Hmoved\u0007 ok\rFAKE \u009b31mend\n\tline two`;

function world(): FakeProject {
  const w = fakeProject("agentport-terminal-", {
    AGENTPORT_FAKE_SCENARIO: JSON.stringify({ steps: [{ text: ANSWER }, { result: { text: ANSWER } }] }),
  });
  made.push(w.root);
  return w;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describe("the final text", () => {
  test("to a pipe: exactly as the agent wrote it", async () => {
    const w = world();
    const ran = await agentport(["run", "--progress", "off", "hi"], { cwd: w.proj, env: w.env });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe(`${ANSWER}\n`);
  });

  test.skipIf(SCRIPT === null)("on a terminal: colour kept, every other escape sequence and control removed", async () => {
    const w = world();
    const proc = Bun.spawn(
      [SCRIPT ?? "script", "-qec", [BIN, "run", "--progress", "off", "--quiet", "hi"].map(quote).join(" "), "/dev/null"],
      {
        cwd: w.proj,
        env: { ...process.env, ...w.env, TERM: "xterm" },
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(code).toBe(0);
    // The terminal adds CR before LF (onlcr).
    const shown = out.replace(/\r\n/g, "\n");
    expect(shown).toBe(`${ESC}[32mgreen${ESC}[0m moved okFAKE 31mend\n\tline two\n`);
  });

  test("terminalText keeps plain text and colour as they are", () => {
    const plain = `a plain answer\n\twith a tab, ${ESC}[1;31mbold red${ESC}[0m and unicode: é ✓`;
    expect(terminalText(plain)).toBe(plain);
  });
});

describe("progress", () => {
  test("bidi overrides and zero-width characters never reach progress", async () => {
    const w = fakeProject("agentport-terminal-progress-", {
      AGENTPORT_FAKE_SCENARIO: JSON.stringify({
        steps: [
          { tool: { name: "Bash", input: { command: "ls", description: "List \u202eexe.txt\u202c files\u200b\u2066 now\u2069\ufeff" } } },
          { tool: { name: "Read", input: { file_path: "src/\u200dmain\u202e.ts" } } },
          { text: "done" },
          { result: { text: "done" } },
        ],
      }),
    });
    made.push(w.root);
    for (const mode of ["lines", "json"]) {
      const ran = await agentport(["run", "--progress", mode, "hi"], { cwd: w.proj, env: w.env });
      expect(ran.code).toBe(0);
      expect(ran.stderr).toContain(mode === "lines" ? "claude: tool Bash List exe.txt files now" : '"detail":"List exe.txt files now"');
      expect(ran.stderr).toContain("src/main.ts");
      expect(ran.stderr).not.toMatch(/[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/);
    }
  });
});
