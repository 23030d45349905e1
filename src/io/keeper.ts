// The keeper: agents die with agentport, even with a `kill -9` of it. One per
// agentport process, started on its first agent: the binary itself in a
// hidden mode (`agentport __keeper`), in a session of its own (so the signal
// that kills agentport's group does not reach it), reading a pipe that only
// agentport holds. agentport names each agent it starts (`watch PID START`)
// and each it has finished with (`done PID`). When the pipe closes — agentport
// exited or was killed — the keeper kills every agent still watched: its
// group and every descendant, also those that made their own group (found by
// the /proc tree on Linux; by group elsewhere), then exits.
//
// While it waits it looks at the tree now and then, so that a grandchild
// orphaned by an agent that already exited is still known to be the agent's.
//
// An isolated agent has none: bwrap (--die-with-parent) dies with agentport,
// and with it the init of the agent's PID namespace, which takes every process
// in it, detached or not (test/keeper.test.ts).
import { join } from "node:path";
import { KEEPER_COMMAND } from "./keeper-command.ts";
import { killTree, listProcesses, reach, treeOf, type ProcessRef, type ProcInfo } from "./proc.ts";
import { agentSandbox } from "./sandbox.ts";

// How often the keeper remembers the watched trees (only while there are any).
const TRACK_MS = 1_000;

interface Watched {
  leader: ProcessRef;
  /** Every process seen in its tree, so an orphan is still known. */
  seen: Map<number, ProcInfo>;
}

// ---------------------------------------------------------------- agentport's side

/** How this agentport starts itself again (compiled: the binary; from source: bun and the entry point). */
function selfCommand(): string[] {
  return Bun.main.startsWith("/$bunfs/") ? [process.execPath] : [process.execPath, join(import.meta.dir, "..", "cli", "main.ts")];
}

export interface KeeperHandle {
  readonly pid: number;
  /** An agent was started: it dies with agentport from now on. */
  watch(agent: ProcessRef): void;
  /** agentport is done with that agent: what is left of its tree is killed now, and it is forgotten. */
  done(pid: number): void;
}

let handle: KeeperHandle | null | undefined;

/**
 * This process's keeper, started on first use; null when it cannot be started
 * (the run goes on without it: a keeper is a safety net, not a condition).
 */
export function keeper(): KeeperHandle | null {
  if (handle !== undefined) return handle;
  handle = null;
  try {
    const child = Bun.spawn([...selfCommand(), KEEPER_COMMAND], {
      stdin: "pipe",
      stdout: "ignore",
      stderr: "ignore",
      env: process.env,
      detached: true,
    });
    child.unref();
    const sink = child.stdin;
    sink.unref();
    const send = (line: string) => {
      try {
        sink.write(`${line}\n`);
        sink.flush();
      } catch {
        // The keeper is gone: nothing watches any more; the driver still kills what it started.
      }
    };
    handle = {
      pid: child.pid,
      watch: (agent) => send(`watch ${agent.pid} ${agent.start || "-"}`),
      done: (pid) => send(`done ${pid}`),
    };
  } catch {
    handle = null;
  }
  return handle;
}

/** The keeper an agent needs: this process's, or none for an isolated agent (its PID namespace dies with agentport). */
export function agentKeeper(): KeeperHandle | null {
  return agentSandbox() === null ? keeper() : null;
}

/** This process's keeper if one was started; never starts one. */
export function startedKeeper(): KeeperHandle | null {
  return handle ?? null;
}

// ---------------------------------------------------------------- the keeper itself

/** `agentport __keeper`: watch until the pipe closes, then kill what is left. */
export async function runKeeper(): Promise<number> {
  const watched = new Map<number, Watched>();
  // Ctrl-C and a hang-up are agentport's to handle; a TERM asks the keeper to end now, agents with it.
  process.on("SIGINT", () => {});
  process.on("SIGHUP", () => {});
  process.on("SIGPIPE", () => {});
  const sweep = () => {
    for (const w of watched.values()) killTree(w.leader, [...w.seen.values()]);
    watched.clear();
  };
  process.on("SIGTERM", () => {
    sweep();
    process.exit(0);
  });
  const remember = () => {
    if (watched.size === 0) return;
    const procs = listProcesses();
    const alive = new Set(procs.map((p) => `${p.pid}:${p.start}`));
    for (const w of watched.values()) {
      // The dead are forgotten (an agent may run thousands of short commands); the living stay known.
      for (const [pid, p] of w.seen) if (!alive.has(`${pid}:${p.start}`)) w.seen.delete(pid);
      const { roots, groups } = reach(w.leader, [...w.seen.values()], procs);
      for (const p of treeOf(roots, groups, procs)) w.seen.set(p.pid, p);
    }
  };
  const tracker = setInterval(remember, TRACK_MS);
  const onLine = (line: string) => {
    const [verb, pidText, ...rest] = line.trim().split(" ");
    const start = rest.join(" ");
    const pid = Number(pidText);
    if (!Number.isInteger(pid) || pid <= 1) return;
    if (verb === "watch") {
      watched.set(pid, { leader: { pid, start: start === "-" ? "" : start }, seen: new Map() });
      remember();
    } else if (verb === "done") {
      const w = watched.get(pid);
      watched.delete(pid);
      if (w !== undefined) killTree(w.leader, [...w.seen.values()]);
    }
  };
  let pending = "";
  const decoder = new TextDecoder();
  try {
    for await (const chunk of Bun.stdin.stream()) {
      pending += decoder.decode(chunk, { stream: true });
      let lf: number;
      while ((lf = pending.indexOf("\n")) >= 0) {
        onLine(pending.slice(0, lf));
        pending = pending.slice(lf + 1);
      }
    }
  } catch {
    // A broken pipe is a closed pipe.
  }
  clearInterval(tracker);
  sweep();
  return 0;
}
