// How agentport starts itself as a fake agent: the compiled binary through a
// symlink named after the fake (busybox style), a source checkout through a
// small shell wrapper. Either way the result is one executable path, which is
// what `--claude-bin` takes.
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import type { FakeName } from "../core/agents.ts";

export const isCompiled = (): boolean => Bun.main.startsWith("/$bunfs/");

/** How to start this very agentport again. */
export function selfArgv(): string[] {
  return isCompiled() ? [process.execPath] : [process.execPath, Bun.main];
}

/** Make `dir/<name>`, an executable that runs this agentport as that fake agent. */
export function installFake(dir: string, name: FakeName): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  if (isCompiled()) {
    symlinkSync(process.execPath, path);
  } else {
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    writeFileSync(path, `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(Bun.main)} ${name} "$@"\n`);
    chmodSync(path, 0o755);
  }
  return path;
}
