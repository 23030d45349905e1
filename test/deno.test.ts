// A Deno-clean core: src/core imports nothing from Bun or Node (only its own
// files and zod), uses no runtime globals, and the captured fixtures replayed
// through it under Deno give the same verdicts as under Bun
// (scripts/deno-check.ts, with the deno devDependency).
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve, dirname } from "node:path";
import { ROOT } from "./helpers.ts";

const CORE = join(ROOT, "src", "core");
/** Packages the core may import: runtime-neutral ones only. */
const ALLOWED_PACKAGES = new Set(["zod"]);

/** Runtime globals and module-system details that tie code to Bun or Node. */
const FORBIDDEN_GLOBALS: [RegExp, string][] = [
  [/\bBun\s*\./, "Bun.*"],
  [/\bDeno\s*\./, "Deno.*"],
  [/\bBuffer\s*[.(]/, "Buffer"],
  [/\brequire\s*\(/, "require()"],
  [
    /\bprocess\s*\.\s*(env|exit|exitCode|argv|argv0|execPath|platform|arch|version|versions|stdout|stderr|stdin|cwd|chdir|pid|ppid|kill|hrtime|nextTick|on|once|emit|memoryUsage|uptime)\b/,
    "process.*",
  ],
  [/\bimport\.meta\.(dir|dirname|path|filename|file|main|require|env)\b/, "import.meta.* (Bun/Node)"],
  [/\b__dirname\b|\b__filename\b/, "__dirname/__filename"],
  [/\bglobalThis\s*\.\s*(Bun|Deno|process|Buffer)\b/, "globalThis.<runtime>"],
];

function sources(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => /\.(ts|tsx|js|mjs)$/.test(f)).map((f) => join(dir, f));
}

/** Every module specifier in a file: static and dynamic imports, re-exports, `import type`. */
function specifiers(text: string): string[] {
  const out: string[] = [];
  const re =
    /\b(?:import|export)\b[^;"'`]*?\bfrom\s*["']([^"']+)["']|\bimport\s*["']([^"']+)["']|\bimport\s*\(\s*["'`]([^"'`]+)["'`]\s*\)/g;
  for (const m of text.matchAll(re)) out.push((m[1] ?? m[2] ?? m[3]) as string);
  return out;
}

/** Comments are allowed to name Bun or Node; code is not. */
function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

export function coreViolations(dir = CORE): string[] {
  const problems: string[] = [];
  for (const file of sources(dir)) {
    const name = relative(ROOT, file);
    const text = readFileSync(file, "utf8");
    for (const spec of specifiers(text)) {
      if (spec.startsWith(".")) {
        const target = resolve(dirname(file), spec);
        if (!target.startsWith(dir + "/")) problems.push(`${name}: imports ${spec}, outside src/core`);
      } else if (!ALLOWED_PACKAGES.has(spec.split("/")[0] as string)) {
        problems.push(`${name}: imports "${spec}" (allowed: relative files in src/core, ${[...ALLOWED_PACKAGES].join(", ")})`);
      }
    }
    const code = stripComments(text);
    // A file that binds its own `process` (judge.ts: a ProcessOutcome parameter) is not using the global.
    const bindsProcess = /[(,]\s*process\s*[:,)]|\b(?:const|let|var)\s+process\b/.test(code);
    code.split("\n").forEach((line, i) => {
      for (const [re, what] of FORBIDDEN_GLOBALS) {
        if (what === "process.*" && bindsProcess) continue;
        if (re.test(line)) problems.push(`${name}:${i + 1}: uses ${what}: ${line.trim().slice(0, 120)}`);
      }
    });
  }
  return problems;
}

describe("a Deno-clean core", () => {
  test("the guard catches what it should (self-check on examples)", () => {
    expect(
      specifiers(
        `import { a } from "./a.ts";\nimport type { B } from "../io/b.ts";\nimport "node:fs";\nconst m = await import("bun:sqlite");\nexport { c } from "zod";`,
      ),
    ).toEqual(["./a.ts", "../io/b.ts", "node:fs", "bun:sqlite", "zod"]);
    expect(stripComments("// Bun.spawn in a comment\nconst x = 1; // process.env too")).not.toMatch(/Bun|process/);
    expect(
      FORBIDDEN_GLOBALS.filter(([re]) => re.test("const x = Bun.file(p); process.env.HOME; Buffer.from(s)")).map(([, w]) => w),
    ).toEqual(["Bun.*", "Buffer", "process.*"]);
  });

  test("src/core imports only its own files and zod, and uses no Bun/Node/Deno globals", () => {
    expect(existsSync(CORE)).toBe(true);
    expect(coreViolations()).toEqual([]);
  });

  test("scripts/deno-check.ts: the fixtures give the same verdicts under Deno (from npm) as under Bun", async () => {
    const deno = join(ROOT, "node_modules", ".bin", "deno");
    if (!existsSync(deno) && Bun.which("deno") === null) {
      throw new Error("deno is not installed: it is a devDependency (npm ci installs it from the npm registry)");
    }
    const proc = Bun.spawn([process.execPath, join(ROOT, "scripts", "deno-check.ts")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) throw new Error(`deno-check exited ${code}:\n${stderr}\n${stdout}`);
    expect(stdout).toMatch(/deno-check: \d+ fixtures .*the same verdicts.* under deno \d/);
  });
});
