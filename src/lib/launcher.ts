// bin/agentport of the npm package: finds the platform package's binary and
// runs it with the same arguments and stdio, passes on the signals sent to
// it, and ends as the binary did (its exit code, or the same signal).
// Bundled for Node by scripts/pack.ts; it runs under Bun as well.
import { spawn } from "node:child_process";
import { accessSync, chmodSync, constants } from "node:fs";
import { binaryPath } from "./platform.ts";

// Sent to a process: passed on to the binary.
const FORWARDED = ["SIGTERM", "SIGUSR1", "SIGUSR2"] as const;
// Sent by a terminal to its whole foreground group, the binary included: not
// passed on (agentport takes a second Ctrl-C as "exit at once"), only waited
// out. To stop a run by pid, send SIGTERM (or use `agentport cancel`).
const GROUP_SIGNALS = ["SIGINT", "SIGQUIT", "SIGHUP"] as const;

function executable(path: string): void {
  try {
    accessSync(path, constants.X_OK);
  } catch {
    // An unpacker that dropped the mode bits: the file is ours to fix.
    chmodSync(path, 0o755);
  }
}

function main(): void {
  // require.resolve from this file: bundled as CommonJS, it is the installed bin/agentport.cjs.
  const found = binaryPath(require.resolve);
  if ("error" in found) {
    process.stderr.write(`agentport: ${found.error}\n`);
    process.exit(5);
  }
  executable(found.path);
  const child = spawn(found.path, process.argv.slice(2), { stdio: "inherit" });
  for (const signal of FORWARDED) process.on(signal, () => child.kill(signal));
  for (const signal of GROUP_SIGNALS) process.on(signal, () => {});
  child.on("error", (error) => {
    process.stderr.write(`agentport: cannot start ${found.path}: ${error.message}\n`);
    process.exit(5);
  });
  child.on("exit", (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    // Die of the same signal, so the caller sees what the binary saw.
    for (const s of [...FORWARDED, ...GROUP_SIGNALS]) process.removeAllListeners(s);
    process.kill(process.pid, signal);
  });
}

main();
