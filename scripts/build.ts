// Compile agentport into one self-contained binary: dist/agentport.
// The binary must not read the .env or bunfig.toml of whatever folder it is
// dropped into, hence the two --no-compile-autoload flags.
import pkg from "../package.json" with { type: "json" };

const out = process.argv[2] ?? "dist/agentport";
const proc = Bun.spawnSync(
  [
    process.execPath,
    "build",
    "--compile",
    "--no-compile-autoload-dotenv",
    "--no-compile-autoload-bunfig",
    "--minify-syntax",
    "src/cli/main.ts",
    "--outfile",
    out,
  ],
  { stdout: "inherit", stderr: "inherit", cwd: `${import.meta.dir}/..` },
);
if (proc.exitCode !== 0) {
  console.error(`build: bun build failed with exit code ${proc.exitCode}`);
  process.exit(proc.exitCode ?? 1);
}
console.error(`build: ${out} (agentport ${pkg.version})`);
