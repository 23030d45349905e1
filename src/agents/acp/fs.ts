// The client methods agentport serves an ACP agent: fs/read_text_file and
// fs/write_text_file, confined to the session's folder. A path must be
// absolute, without a `..` segment, and lie under the folder once every
// symlink in it is followed (a new file's folder must); anything else is
// refused with one line.
import { existsSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, sep } from "node:path";
import type { AcpFsHost } from "../../core/acp/reducer.ts";

// A text file bigger than this is not read whole into a reply.
const MAX_READ_BYTES = 16 * 1024 * 1024;

export function confinedFs(folder: string): AcpFsHost {
  const root = realpathSync(folder);
  const inside = (real: string) => real === root || real.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
  /** The path's real location when it is confined, else why not. */
  const place = (path: string): { ok: true; real: string } | { ok: false; why: string } => {
    if (!isAbsolute(path)) return { ok: false, why: `${path}: not an absolute path` };
    if (path.split("/").includes("..")) return { ok: false, why: `${path}: a ".." segment is refused` };
    let real: string;
    try {
      real = existsSync(path) ? realpathSync(path) : `${realpathSync(dirname(path))}${sep}${path.split("/").pop()}`;
    } catch {
      return { ok: false, why: `${path}: its folder does not exist` };
    }
    return inside(real) ? { ok: true, real } : { ok: false, why: `${path}: outside the session's folder ${root}` };
  };
  return {
    read(path, line, limit) {
      const at = place(path);
      if (!at.ok) return at;
      try {
        if (statSync(at.real).size > MAX_READ_BYTES) return { ok: false, why: `${path}: larger than ${MAX_READ_BYTES} bytes` };
        let content = readFileSync(at.real, "utf8");
        if (line !== undefined || limit !== undefined) {
          const lines = content.split("\n");
          const from = Math.max(0, (line ?? 1) - 1);
          content = lines.slice(from, limit === undefined ? undefined : from + Math.max(0, limit)).join("\n");
        }
        return { ok: true, content };
      } catch (error) {
        return { ok: false, why: `${path}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}` };
      }
    },
    write(path, content) {
      const at = place(path);
      if (!at.ok) return at;
      try {
        writeFileSync(at.real, content);
        return { ok: true };
      } catch (error) {
        return { ok: false, why: `${path}: ${(error as NodeJS.ErrnoException).code ?? "unwritable"}` };
      }
    },
  };
}
