// Writes to fd 1 and fd 2 as they are, synchronously: Bun's process.stdout and
// process.stderr load its node:stream machinery (~4 ms a run) and leave the
// caller's pipe or file non-blocking after agentport exits. What a failure
// means is the caller's (src/cli/stdout.ts); stderr's are dropped here.
import { fstatSync, readFileSync, readlinkSync, writeSync } from "node:fs";

const encoder = new TextEncoder();

/** All of `text` onto `fd` (partial writes continued, a non-blocking fd waited for): null when written, else why not. */
export function writeFd(fd: 1 | 2, text: string): NodeJS.ErrnoException | null {
  const data = encoder.encode(text);
  let at = 0;
  while (at < data.length) {
    try {
      at += writeSync(fd, data, at, data.length - at);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EAGAIN" || code === "EWOULDBLOCK") Bun.sleepSync(1);
      else if (code !== "EINTR") return error as NodeJS.ErrnoException;
    }
  }
  return null;
}

/** A human line: a stderr that is closed or full loses it, and the run goes on. */
export function writeStderr(text: string): void {
  writeFd(2, text);
}

const O_CLOEXEC = 0o2000000;

/**
 * Was stdout closed when agentport started (`>&-`)? Bun puts /dev/null in its
 * place, opened after the exec and so close-on-exec, which an inherited fd 1
 * never is. Linux only (/proc); elsewhere false.
 */
export function stdoutClosedAtStart(): boolean {
  try {
    // Most stdouts are a pipe, a file or a terminal: only a character device is looked at further.
    if (!fstatSync(1).isCharacterDevice() || readlinkSync("/proc/self/fd/1") !== "/dev/null") return false;
    const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync("/proc/self/fdinfo/1", "utf8"))?.[1];
    return flags !== undefined && (parseInt(flags, 8) & O_CLOEXEC) !== 0;
  } catch {
    return false;
  }
}

type TtyCheck = (fd: number) => boolean;

/** Bun's own isTTY binding: node:tty would load the stream machinery (~2.5 ms, ~2.4 MB) for one ioctl. */
function ttyCheck(): TtyCheck {
  try {
    const binding = (process as unknown as { binding(name: string): { isTTY?: TtyCheck } }).binding("tty_wrap");
    if (typeof binding.isTTY === "function") return binding.isTTY;
  } catch {
    // A runtime without it: node:tty, whatever it costs.
  }
  return (require("node:tty") as typeof import("node:tty")).isatty;
}

let isatty: TtyCheck | undefined;

export const isTerminal = (fd: 0 | 1 | 2): boolean => (isatty ??= ttyCheck())(fd);

/** The width to fit: $COLUMNS, else the terminal's (only a terminal has one). */
export function columnsOf(fd: 1 | 2): number | undefined {
  const asked = Number(process.env.COLUMNS);
  if (asked > 0) return asked;
  if (!isTerminal(fd)) return undefined;
  return (fd === 1 ? process.stdout : process.stderr).columns;
}
