// libc through bun:ffi, for what Bun does not offer (pipe sizes, the child
// subreaper): Linux with glibc only; null elsewhere (musl, no FFI), and the
// caller goes without.
import type { FFIFunction, Library } from "bun:ffi";

/** libc with `symbols` bound, or null where it cannot be had. */
export function openLibc<Fns extends Record<string, FFIFunction>>(symbols: Fns): Library<Fns> | null {
  if (process.platform !== "linux") return null;
  try {
    // Loaded here, not at the top: only a run that spawns an agent pays for it.
    const { dlopen } = require("bun:ffi") as typeof import("bun:ffi");
    return dlopen("libc.so.6", symbols);
  } catch {
    return null;
  }
}
