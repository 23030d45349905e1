// Every example in the README and docs/ is checked against the binary, so an
// example cannot drift from it: each `agentport` command line names a command
// that exists and only flags that command takes (the same check the binary
// makes); each run line's settings resolve for its agent (`agentport config`
// with the same flags exits 0); the examples that need no model run for real;
// and every complete JSON example validates against its published schema.
import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { COMMANDS } from "../src/cli/command-table.ts";
import { checkFlags } from "../src/cli/flags.ts";
import { BIN, ROOT, tempDir } from "./helpers.ts";

interface Example {
  page: string;
  line: string;
  /** The words after `agentport`, shell-split. */
  words: string[];
  /** `NAME=value` words before `agentport`. */
  env: Record<string, string>;
}

const pages = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** The fenced blocks of a page with their info string. */
function blocks(page: string): { lang: string; body: string }[] {
  const out: { lang: string; body: string }[] = [];
  for (const m of readFileSync(join(ROOT, page), "utf8").matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm))
    out.push({ lang: m[1] ?? "", body: m[2] ?? "" });
  return out;
}

/** Shell words of one command (quotes, no expansion); stops at an unquoted `#` comment. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quote: string | null = null;
  for (const c of line) {
    if (quote !== null) {
      if (c === quote) quote = null;
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= "";
    } else if (c === " " || c === "\t") {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "#" && word === null) break;
    else word = (word ?? "") + c;
  }
  if (quote !== null) throw new Error(`unbalanced quote in: ${line}`);
  if (word !== null) words.push(word);
  return words;
}

/** The `agentport …` commands of the sh/console blocks: split at `&&`, `;` and `|`, without redirections or a trailing `&`. */
function examples(page: string, text: { lang: string; body: string }[] = blocks(page)): Example[] {
  const out: Example[] = [];
  for (const { lang, body } of text) {
    if (lang !== "sh" && lang !== "console") continue;
    for (const raw of body.replace(/\\\n/g, " ").split("\n")) {
      const line = lang === "console" ? (raw.startsWith("$ ") ? raw.slice(2) : "") : raw;
      for (const part of line.split(/&&|;|\|(?!\|)/)) {
        const words = shellWords(part.trim().replace(/\s&$/, ""));
        const at = words.indexOf("agentport");
        if (at === -1) continue;
        const env: Record<string, string> = {};
        for (const w of words.slice(0, at)) {
          const eq = w.indexOf("=");
          if (eq > 0) env[w.slice(0, eq)] = w.slice(eq + 1);
        }
        const rest = words.slice(at + 1);
        const redirect = rest.findIndex((w) => /^\d?>/.test(w) || w === "<");
        out.push({ page, line: part.trim(), words: redirect === -1 ? rest : rest.slice(0, redirect), env });
      }
    }
  }
  return out;
}

/** What the binary's own flag check says of an example (null: it passes). */
async function flagProblem(words: string[]): Promise<string | null> {
  const [name = "", ...argv] = words;
  const load = COMMANDS[name];
  if (load === undefined) return `no command "${name}"`;
  try {
    await checkFlags(await load(), argv, name);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

const all = pages.flatMap((page) => examples(page));

describe("docs examples", () => {
  test("the extractor finds the examples of every page that has them", () => {
    expect(all.length).toBeGreaterThan(30);
    for (const page of ["README.md", "docs/agents.md", "docs/best-of-n.md", "docs/runs.md", "docs/ledger-and-fleet.md"]) {
      expect(all.some((e) => e.page === page)).toBe(true);
    }
  });

  test("the check catches a drifted example (a misspelt flag, a command that is gone)", async () => {
    const [typo] = examples("x", [{ lang: "sh", body: "cd app && agentport run --timout 60 'Fix it' | jq .   # a typo\n" }]);
    expect(typo!.words).toEqual(["run", "--timout", "60", "Fix it"]);
    expect(await flagProblem(typo!.words)).toContain("unknown option --timout");
    expect(await flagProblem(["status", "ID"])).toBe('no command "status"');
  });

  test("every example names a command that exists and only flags that command takes", async () => {
    const problems: string[] = [];
    for (const e of all) {
      const problem = await flagProblem(e.words);
      if (problem !== null) problems.push(`${e.page}: ${e.line}\n    ${problem}`);
    }
    expect(problems).toEqual([]);
  });

  test("every run example's settings resolve for its agent (agentport config with the same flags exits 0)", async () => {
    const home = tempDir("docs-examples-");
    const cwd = join(home, "project");
    mkdirSync(cwd);
    writeFileSync(join(cwd, "house-rules.md"), "Keep the diff small.\n");
    const runs = all.filter((e) => e.words[0] === "run");
    expect(runs.length).toBeGreaterThan(8);
    const failed: string[] = [];
    for (const e of runs) {
      const argv = e.words.slice(1).filter((w) => w !== "--json");
      const proc = Bun.spawnSync([BIN, "config", ...argv], {
        cwd,
        env: { ...process.env, AGENTPORT_HOME: home, ...e.env },
        stdout: "pipe",
        stderr: "pipe",
      });
      if (proc.exitCode !== 0) failed.push(`${e.page}: ${e.line}\n    exit ${proc.exitCode}: ${proc.stderr.toString().trim()}`);
    }
    expect(failed).toEqual([]);
  });

  test("the examples that need no model run for real through the binary", async () => {
    const home = tempDir("docs-examples-run-");
    const cwd = join(home, "project");
    mkdirSync(cwd);
    const env = { ...process.env, AGENTPORT_HOME: home };
    const ran = (args: string[], extra: Record<string, string> = {}) =>
      Bun.spawnSync([BIN, ...args], { cwd, env: { ...env, ...extra }, stdout: "pipe", stderr: "pipe" });
    // The README's fake-agent line, with its symlink made where the test owns the folder.
    const fake = all.find((e) => e.page === "README.md" && e.env.AGENTPORT_FAKE_SCENARIO !== undefined);
    expect(fake).toBeDefined();
    const link = join(home, "fake-claude");
    Bun.spawnSync(["ln", "-s", BIN, link]);
    const words = fake!.words.map((w) => (w === "/tmp/fake-claude" ? link : w));
    const run = ran(words, fake!.env);
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout.toString()).status).toBe("completed");
    const offline = all.filter(
      (x) => (x.words[0] === "bon" && (x.words.includes("--demo") || x.words.includes("--dry-run"))) || x.words[0] === "selftest",
    );
    expect(offline.length).toBeGreaterThanOrEqual(3);
    const failed: string[] = [];
    for (const e of offline) {
      const r = ran(e.words);
      if (r.exitCode !== 0) failed.push(`${e.page}: ${e.line}\n    exit ${r.exitCode}: ${r.stderr.toString().trim().slice(-300)}`);
    }
    expect(failed).toEqual([]);
  }, 120_000);

  test("every name a library example imports from agentport is exported by the library", async () => {
    const library = (await import("../src/lib/index.ts")) as Record<string, unknown>;
    const imported: string[] = [];
    for (const page of pages) {
      for (const { lang, body } of blocks(page)) {
        if (lang !== "js" && lang !== "ts") continue;
        for (const m of body.matchAll(/import \{([^}]*)\} from "agentport"/g))
          imported.push(
            ...(m[1] ?? "")
              .split(",")
              .map((n) => n.trim())
              .filter(Boolean),
          );
      }
    }
    expect(imported.length).toBeGreaterThan(2);
    expect(imported.filter((name) => library[name] === undefined)).toEqual([]);
  });

  test("every complete JSON example validates against its published schema", () => {
    const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
    const schema = (name: string) => ajv.compile(JSON.parse(readFileSync(join(ROOT, "schemas", `${name}.json`), "utf8")));
    const checked: string[] = [];
    const problems: string[] = [];
    for (const page of pages) {
      for (const { lang, body } of blocks(page)) {
        const text = body.trim();
        // A JSON line with an elision ("…" as a key) is a fragment, not an example of a whole record.
        if (text.includes('"…":')) continue;
        let name: string | null = null;
        if (lang === "json" && text.includes('"agents"')) name = "config";
        else if (lang === "" && text.startsWith('{"schema_version"') && text.includes('"kind"')) name = "progress";
        if (name === null) continue;
        const validate = schema(name);
        if (!validate(JSON.parse(text))) problems.push(`${page} (${name}): ${ajv.errorsText(validate.errors)}`);
        checked.push(`${page}:${name}`);
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toContain("docs/agents.md:config");
    expect(checked).toContain("docs/runs.md:progress");
  });
});
