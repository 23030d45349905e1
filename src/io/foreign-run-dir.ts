// A run folder read back (follow, replay ID) is one of the home's: a ledger
// row, an imported one above all, may name any folder.
import { existsSync, realpathSync } from "node:fs";
import { join, resolve, sep } from "node:path";

/**
 * Why `runDir` is not a run folder of `home` (a folder inside `<home>/runs`,
 * symlinks resolved), or null when it is: a ledger row (an imported one) may
 * name any folder, and follow and replay read what they find there.
 */
export function foreignRunDir(home: string, runDir: string): string | null {
  const real = (path: string) => (existsSync(path) ? realpathSync(path) : resolve(path));
  const runs = real(join(home, "runs"));
  return real(runDir).startsWith(`${runs}${sep}`) ? null : `its run folder ${runDir} is not inside ${join(home, "runs")}`;
}
