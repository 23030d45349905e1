// Where an absolute path really lands: each existing component's symlink
// followed as the OS would (a dangling one too, since the agent may create
// its target later), `..` taken physically; the part that does not exist yet
// is kept as written, and refused (null) when it holds a `..`. For the
// permission policy's paths (src/core/permissions.ts stays pure).
import { lstatSync, readlinkSync } from "node:fs";
import { dirname } from "node:path";

const MAX_LINKS = 40;

export function physicalPath(path: string, links = 0): string | null {
  if (!path.startsWith("/") || path.includes("\0")) return null;
  const parts = path.split("/");
  let real = "/";
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      real = dirname(real);
      continue;
    }
    const next = real === "/" ? `/${part}` : `${real}/${part}`;
    const rest = parts.slice(i + 1).filter((p) => p !== "" && p !== ".");
    let link: boolean;
    try {
      link = lstatSync(next).isSymbolicLink();
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") return null;
      // Not there yet: the rest is created as written.
      return rest.includes("..") ? null : [next, ...rest].join("/");
    }
    if (link) {
      if (links >= MAX_LINKS) return null;
      let target: string;
      try {
        target = readlinkSync(next);
      } catch {
        return null;
      }
      const base = target.startsWith("/") ? target : `${real}/${target}`;
      return physicalPath([base, ...parts.slice(i + 1)].join("/"), links + 1);
    }
    real = next;
  }
  return real;
}
