// Lay out and pack what a release publishes, from the binaries build --all made:
//
//   bun run scripts/pack.ts [--from DIR] [--out DIR] [--targets a,b]
//
//   OUT/npm/agentport/          the main package: the launcher (bin/agentport.cjs),
//                               the library (lib/index.js, .d.ts), schemas/, one
//                               optional dependency per platform
//   OUT/npm/<target>/           @agentport/<target>: bin/agentport, os/cpu/libc
//   OUT/packages/*.tgz          each of them, as `npm pack` makes it
//   OUT/release/                agentport-VERSION-<target>.tar.gz, SHA256SUMS, install.sh
//
// --from: where agentport-<target> are (default dist/); --targets: which of
// them (default: all of build.ts's). The main package names every platform
// whichever were packed. The dev package (./package.json) is never published.
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { PLATFORMS, SCOPE, type Platform } from "../src/lib/platform.ts";
import { SCHEMA_NAMES } from "../src/cli/contract.ts";

const ROOT = resolve(import.meta.dir, "..");
const VERSION = pkg.version;
const DESCRIPTION =
  "One binary between an automation and headless coding agents (pi, claude, codex, gemini, opencode): supervised runs, one verdict, a session ledger.";

function fail(message: string): never {
  console.error(`pack: ${message}`);
  process.exit(1);
}

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : (process.argv[at + 1] ?? fail(`${name} needs a value`));
}

function sh(argv: string[], cwd = ROOT): string {
  const proc = Bun.spawnSync(argv, { cwd, stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) fail(`${argv.join(" ")}: ${proc.stderr.toString().trim().slice(-600)}`);
  return proc.stdout.toString();
}

/** The same, in the background: the packing jobs compress ~100 MiB each, side by side. */
async function shAsync(argv: string[], cwd: string): Promise<void> {
  const proc = Bun.spawn(argv, { cwd, stdout: "ignore", stderr: "pipe" });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) fail(`${argv.join(" ")}: ${stderr.trim().slice(-600)}`);
}

function writeJson(path: string, value: unknown): void {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** os, cpu and libc as npm reads them, from a platform's name. */
function platformFields(platform: Platform) {
  const [os, arch, libc] = platform.split("-") as [string, string, string | undefined];
  return { os: [os], cpu: [arch], ...(os === "linux" ? { libc: [libc === "musl" ? "musl" : "glibc"] } : {}) };
}

function layPlatform(platform: Platform, binary: string, dir: string): void {
  mkdirSync(join(dir, "bin"), { recursive: true });
  copyFileSync(binary, join(dir, "bin", "agentport"));
  chmodSync(join(dir, "bin", "agentport"), 0o755);
  copyFileSync(join(ROOT, "LICENSE"), join(dir, "LICENSE"));
  writeFileSync(
    join(dir, "README.md"),
    `# ${SCOPE}/${platform}\n\nThe agentport binary for ${platform}. Install \`agentport\`, which picks this package on this platform.\n`,
  );
  writeJson(join(dir, "package.json"), {
    name: `${SCOPE}/${platform}`,
    version: VERSION,
    description: `The agentport binary for ${platform}`,
    license: "MIT",
    ...platformFields(platform),
    files: ["bin/agentport", "README.md", "LICENSE"],
    preferUnplugged: true,
  });
}

function layMain(dir: string): void {
  for (const sub of ["bin", "lib", "schemas"]) mkdirSync(join(dir, sub), { recursive: true });
  const bundle = (entry: string, out: string, format: string, extra: string[] = []) =>
    sh([process.execPath, "build", entry, "--target=node", `--format=${format}`, "--minify-syntax", ...extra, "--outfile", join(dir, out)]);
  bundle("src/lib/launcher.ts", "bin/agentport.cjs", "cjs", ["--banner", "#!/usr/bin/env node"]);
  chmodSync(join(dir, "bin", "agentport.cjs"), 0o755);
  bundle("src/lib/index.ts", "lib/index.js", "esm");
  // The types: tsc's declarations of the library's two files (types.ts stands alone, index.ts names only it).
  const types = join(dir, ".types");
  sh([
    join(ROOT, "node_modules", ".bin", "tsc"),
    "src/lib/index.ts",
    "--declaration",
    "--emitDeclarationOnly",
    "--outDir",
    types,
    "--target",
    "esnext",
    "--module",
    "preserve",
    "--moduleResolution",
    "bundler",
    "--allowImportingTsExtensions",
    "--resolveJsonModule",
    "--skipLibCheck",
    "--strict",
    "--types",
    "node",
  ]);
  for (const file of ["index", "types"]) {
    const text = readFileSync(join(types, "src", "lib", `${file}.d.ts`), "utf8").replace(/from "\.\/types\.ts"/g, 'from "./types.js"');
    if (/from "\.\.?\//.test(text.replace(/from "\.\/types\.js"/g, "")))
      fail(`lib/${file}.d.ts imports beyond the library: keep src/lib/index.ts's signatures to src/lib/types.ts`);
    writeFileSync(join(dir, "lib", `${file}.d.ts`), text);
  }
  rmSync(types, { recursive: true });
  for (const name of SCHEMA_NAMES) copyFileSync(join(ROOT, "schemas", `${name}.json`), join(dir, "schemas", `${name}.json`));
  copyFileSync(join(ROOT, "LICENSE"), join(dir, "LICENSE"));
  copyFileSync(join(ROOT, "npm", "README.md"), join(dir, "README.md"));
  writeJson(join(dir, "package.json"), {
    name: "agentport",
    version: VERSION,
    description: DESCRIPTION,
    license: "MIT",
    keywords: ["coding-agent", "claude", "codex", "gemini", "opencode", "pi", "supervisor", "cli"],
    type: "module",
    bin: { agentport: "bin/agentport.cjs" },
    exports: {
      ".": { types: "./lib/index.d.ts", default: "./lib/index.js" },
      "./schemas/*": "./schemas/*",
      "./package.json": "./package.json",
    },
    types: "./lib/index.d.ts",
    files: ["bin", "lib", "schemas", "README.md", "LICENSE"],
    engines: { node: ">=20" },
    optionalDependencies: Object.fromEntries(PLATFORMS.map((p) => [`${SCOPE}/${p}`, VERSION])),
  });
}

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** agentport-VERSION-<platform>.tar.gz: a folder of that name with the binary and the LICENSE. */
async function archive(platform: Platform, from: string, dir: string): Promise<string> {
  const name = `agentport-${VERSION}-${platform}`;
  const stage = join(dir, name);
  mkdirSync(stage, { recursive: true });
  copyFileSync(join(from, `agentport-${platform}`), join(stage, "agentport"));
  chmodSync(join(stage, "agentport"), 0o755);
  copyFileSync(join(ROOT, "LICENSE"), join(stage, "LICENSE"));
  await shAsync(["tar", "-czf", `${name}.tar.gz`, "--owner=0", "--group=0", name], dir);
  rmSync(stage, { recursive: true });
  return `${sha256(join(dir, `${name}.tar.gz`))}  ${name}.tar.gz`;
}

const from = resolve(option("--from") ?? join(ROOT, "dist"));
const out = resolve(option("--out") ?? join(ROOT, "dist"));
const asked = option("--targets")?.split(",") ?? [...PLATFORMS];
const targets = asked.map((t) =>
  (PLATFORMS as readonly string[]).includes(t) ? (t as Platform) : fail(`unknown target ${t}: one of ${PLATFORMS.join(", ")}`),
);
for (const t of targets)
  if (!existsSync(join(from, `agentport-${t}`)))
    fail(`${join(from, `agentport-${t}`)} is missing: run bun run scripts/build.ts --all first`);

const started = performance.now();
for (const sub of ["npm", "packages", "release"]) rmSync(join(out, sub), { recursive: true, force: true });
mkdirSync(join(out, "packages"), { recursive: true });
layMain(join(out, "npm", "agentport"));
for (const t of targets) layPlatform(t, join(from, `agentport-${t}`), join(out, "npm", t));
mkdirSync(join(out, "release"), { recursive: true });
const packing = ["agentport", ...targets].map((dir) =>
  shAsync(["npm", "pack", "--silent", "--pack-destination", join(out, "packages")], join(out, "npm", dir)),
);
const sums = await Promise.all(targets.map((t) => archive(t, from, join(out, "release"))));
await Promise.all(packing);
writeFileSync(join(out, "release", "SHA256SUMS"), `${sums.join("\n")}\n`);
copyFileSync(join(ROOT, "install.sh"), join(out, "release", "install.sh"));
const size = (path: string) => `${(statSync(path).size / 1024 / 1024).toFixed(2)} MiB`;
for (const file of readdirSync(join(out, "packages"))) console.error(`pack: packages/${file} (${size(join(out, "packages", file))})`);
for (const file of readdirSync(join(out, "release")).filter((f) => f.endsWith(".tar.gz")))
  console.error(`pack: release/${file} (${size(join(out, "release", file))})`);
console.error(`pack: agentport ${VERSION}, ${targets.length} platform(s), in ${((performance.now() - started) / 1000).toFixed(1)} s`);
