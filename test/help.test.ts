// Every command's help: sections (usage, arguments, options in groups,
// examples, exit codes), at most 80 columns off a terminal or at COLUMNS=80,
// the terminal's width when wider; `agentport help CMD` is `CMD --help`; one
// spelling per flag; --json wherever a result is printed; completion scripts
// for bash, zsh and fish that their shells parse.
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentport, fakeProject, tempDir } from "./helpers.ts";

const COMMANDS = [
  "run",
  "resume",
  "sessions",
  "show",
  "replay",
  "selftest",
  "doctor",
  "config",
  "import",
  "ledger",
  "bon",
  "trust",
  "prune",
  "follow",
  "cancel",
  "help",
  "completion",
];
/** The commands that print a result: each takes --json. */
const RESULTS = COMMANDS.filter((c) => c !== "help" && c !== "completion");

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const width = (line: string) => [...line].length;
const help = (args: string[], env: Record<string, string> = {}) => agentport(args, { env: { COLUMNS: "", ...env } });

describe("help", () => {
  test("every command: sections in order, no line over 80 columns at COLUMNS=80 nor off a terminal", async () => {
    for (const command of ["", ...COMMANDS]) {
      const args = command === "" ? ["--help"] : [command, "--help"];
      for (const env of [{ COLUMNS: "80" }, {}] as Record<string, string>[]) {
        const ran = await help(args, env);
        expect(ran.code).toBe(0);
        const lines = ran.stdout.trimEnd().split("\n");
        const long = lines.filter((l) => width(l) > 80);
        expect({ command, long }).toEqual({ command, long: [] });
        expect(lines.filter((l) => l !== l.trimEnd())).toEqual([]);
        const sections = lines.filter((l) => /^[A-Z][A-Z ]+$/.test(l));
        const expected = [
          "USAGE",
          ...(command === "" ? ["COMMANDS"] : []),
          ...(/^(run|resume|show|replay|import|ledger|bon|trust|follow|cancel|help|completion)$/.test(command) ? ["ARGUMENTS"] : []),
          ...(command === "" ? [] : ["OPTIONS"]),
          "EXAMPLES",
          "EXIT CODES",
        ];
        expect({ command, sections }).toEqual({
          command,
          sections: command === "help" || command === "completion" ? expected.filter((s) => s !== "OPTIONS") : expected,
        });
      }
    }
  }, 60_000);

  test("options in groups, aligned in one description column", async () => {
    const ran = await help(["run", "--help"], { COLUMNS: "80" });
    for (const group of ["  Of run", "  The request", "  Limits and supervision", "  Output", "  Ledger and state"])
      expect(ran.stdout).toContain(`\n${group}\n`);
    const columns = new Set(
      ran.stdout
        .split("\n")
        .filter((l) => /^ {4}-/.test(l) && / {2,}\S/.test(l.trim()))
        .map((l) => l.search(/(?<=\S {2,})\S/)),
    );
    expect([...columns]).toHaveLength(1);
  });

  test("a wider terminal gets longer lines", async () => {
    const ran = await help(["run", "--help"], { COLUMNS: "140" });
    const widest = Math.max(...ran.stdout.split("\n").map(width));
    expect(widest).toBeGreaterThan(80);
    expect(widest).toBeLessThanOrEqual(140);
  });

  test("agentport help CMD is CMD --help; help alone is --help; an unknown command is one line, exit 2", async () => {
    for (const command of COMMANDS) {
      const [viaHelp, viaFlag] = await Promise.all([help(["help", command]), help([command, "--help"])]);
      expect(viaHelp.code).toBe(0);
      expect({ command, text: viaHelp.stdout }).toEqual({ command, text: viaFlag.stdout });
    }
    expect((await help(["help"])).stdout).toBe((await help(["--help"])).stdout);
    const unknown = await help(["help", "nope"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('[error] unknown command "nope": try agentport help\n');
  }, 60_000);

  test("one spelling: bon --dry-run (--dry hidden); bon --help lists the flags bon applies (every agent's, for arms through run's path), not acp's", async () => {
    const bon = (await help(["bon", "--help"])).stdout;
    expect(bon).toContain("--dry-run");
    expect(bon).not.toMatch(/--dry\b(?!-)/);
    for (const applied of [
      "--max-turns",
      "--max-cost",
      "--nudges",
      "--permission-mode",
      "--fail-on-refusal",
      "--append-system-prompt",
      "--claude-bin",
      "--codex-bin",
      "--gemini-bin",
    ])
      expect(bon).toMatch(new RegExp(`^ {4}${applied}\\b`, "m"));
    expect(bon).not.toMatch(/^ {4}--acp-command\b/m);
    const refused = await agentport(["bon", "--acp-command", "x", "spec.md"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe('[error] unknown option --acp-command for "bon": see agentport bon --help\n');
  });

  test("--json on every command that prints a result", async () => {
    for (const command of RESULTS)
      expect({
        command,
        json:
          (await help([command, "--help"])).stdout.includes("\n    --json") ||
          (await help([command, "--help"])).stdout.includes("\n  --json"),
      }).toEqual({ command, json: true });
  }, 60_000);

  test("cancel --json: one object", async () => {
    const w = fakeProject("agentport-help-cancel-");
    made.push(w.root);
    const ran = await agentport(["run", "--agent", "claude", "--json", "hi"], { cwd: w.proj, env: w.env });
    const id = JSON.parse(ran.stdout).session_id as string;
    const cancel = await agentport(["cancel", id, "--json"], { cwd: w.proj, env: w.env });
    expect(cancel.code).toBe(0);
    expect(JSON.parse(cancel.stdout)).toEqual({ session_id: id, was_running: false, phase: 1, status: "completed" });
  });
});

describe("completion", () => {
  const dir = tempDir("agentport-completion-");
  made.push(dir);
  const has = (shell: string) => Bun.spawnSync(["sh", "-c", `command -v ${shell}`]).exitCode === 0;

  for (const shell of ["bash", "zsh", "fish"]) {
    test.skipIf(!has(shell))(`${shell}: the script parses and names every command and flag spelling`, async () => {
      const ran = await agentport(["completion", shell]);
      expect(ran.code).toBe(0);
      for (const command of COMMANDS) expect(ran.stdout).toContain(command);
      expect(ran.stdout).toContain("dry-run");
      expect(ran.stdout).toContain("continue");
      const file = join(dir, `agentport.${shell}`);
      writeFileSync(file, ran.stdout);
      const check = shell === "fish" ? ["fish", "--no-execute", file] : [shell, "-n", file];
      const parsed = Bun.spawnSync(check, { stderr: "pipe" });
      expect({ shell, stderr: parsed.stderr.toString(), code: parsed.exitCode }).toEqual({ shell, stderr: "", code: 0 });
    });
  }

  test("bash: the command names, a command's flags, an enum's values", async () => {
    const script = (await agentport(["completion", "bash"])).stdout;
    const complete = (line: string) => {
      const words = line.split(" ");
      const program = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _agentport; printf '%s\\n' "\${COMPREPLY[@]}"`;
      return Bun.spawnSync(["bash", "-c", program]).stdout.toString().trim().split("\n");
    };
    expect(complete("agentport resum")).toEqual(["resume"]);
    expect(complete("agentport run --cont")).toEqual(["--continue"]);
    expect(complete("agentport run --agent co")).toEqual(["codex"]);
    expect(complete("agentport bon --dry")).toEqual(["--dry-run"]);
  });

  test.skipIf(!has("fish"))("fish: commands, an enum's values, the flag spelling", async () => {
    const file = join(dir, "complete.fish");
    writeFileSync(file, (await agentport(["completion", "fish"])).stdout);
    const complete = (line: string) =>
      Bun.spawnSync(["fish", "--no-config", "-c", `source ${file}; complete -C '${line}'`])
        .stdout.toString()
        .trim()
        .split("\n")
        .map((l) => l.split("\t")[0]);
    expect(complete("agentport resum")).toEqual(["resume"]);
    expect(complete("agentport run --agent ")).toEqual(["acp", "claude", "codex", "gemini", "opencode", "pi"]);
    expect(complete("agentport bon --dr")).toEqual(["--dry-run"]);
  });

  test("an unknown shell: one line, exit 2", async () => {
    const ran = await agentport(["completion", "tcsh"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toBe('[error] completion: unknown shell "tcsh" (known: bash, zsh, fish)\n');
  });
});
