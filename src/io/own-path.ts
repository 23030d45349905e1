// The folders and files agentport keeps in its home are its own: it makes
// them and makes no symlink among them, so a symlink found where one of them
// should be was planted and is never followed. A folder that is a link is
// refused (PlantedLink, one line, exit 5); a file is replaced, never written
// through: written to a new file beside it, then renamed over whatever is there.
import { lstatSync, mkdirSync, readlinkSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { AgentportError } from "../core/errors.ts";

export class PlantedLink extends AgentportError {
  constructor(readonly path: string) {
    super(
      "planted_link",
      `${path} is a symbolic link (to ${target(path)}) that agentport did not make, and it follows none: remove the link (agentport makes the folder itself)`,
    );
  }
}

function target(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return "?";
  }
}

/** Throw PlantedLink when `path` is a symlink; nothing there is fine. */
export function refuseLink(path: string): void {
  try {
    if (lstatSync(path).isSymbolicLink()) throw new PlantedLink(path);
  } catch (error) {
    if (error instanceof PlantedLink) throw error;
  }
}

/** `path` as a folder of agentport's (made when missing), never a link to one elsewhere. */
export function ownFolder(path: string, mode = 0o700): string {
  refuseLink(path);
  mkdirSync(path, { recursive: true, mode });
  refuseLink(path);
  return path;
}

/** `text` as the file at `path`: a new file in the same folder renamed over it, so a planted link is replaced, not written through. */
export function replaceFile(path: string, text: string, mode = 0o600): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${crypto.randomUUID().slice(0, 8)}`);
  try {
    writeFileSync(temp, text, { mode, flag: "wx" });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
