// The keeper: agents die with agentport, even with a `kill -9` of it. One per
// agentport process, started on its first agent: the binary itself in a
// hidden mode (`agentport __keeper`), in a session of its own (so the signal
// that kills agentport's group does not reach it), reading a pipe that only
// agentport holds. agentport names each agent it starts (`watch PID START`)
// and each it has finished with (`done PID`). When the pipe closes — agentport
// exited or was killed — the keeper kills every agent still watched: its
// group and every descendant, also those that made their own group (found by
// the /proc tree on Linux; by group elsewhere), and on Linux every process
// that carries agentport's tag (agent-tag.ts), then exits.
//
// While it waits it looks at the tree now and then, so that a grandchild
// orphaned by an agent that already exited is still known to be the agent's.
//
// An isolated agent has none: bwrap (--die-with-parent) dies with agentport,
// and with it the init of the agent's PID namespace, which takes every process
// in it, detached or not (test/keeper.test.ts).
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { KEEPER_COMMAND } from "./keeper-command.ts";
import { agentTag, carriesTag } from "./agent-tag.ts";
import { childrenOf, HAS_PROC, killTree, listProcesses, procInfo, reach, treeOf, type ProcessRef, type ProcInfo } from "./proc.ts";
import { runnerIdentity } from "./proc-identity.ts";
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

// Linux with CONFIG_PROC_CHILDREN: a tree can be read downwards.
const WALKABLE = existsSync(`/proc/${process.pid}/task/${process.pid}/children`);

const same = (p: ProcInfo | null, ref: ProcessRef): p is ProcInfo => p !== null && (ref.start === "" || p.start === ref.start);

/**
 * The watched tree now, read down from the leader and every process seen
 * before (the dead forgotten, the living kept, what they forked added):
 * /proc reads for the tree's own processes, not for every process of the
 * box, which at a hundred runs made each keeper's look cost ~6 ms a second.
 * What joined the leader's group without descending from it is the final
 * kill's to find (killTree signals the group).
 */
function below(w: Watched): Map<number, ProcInfo> {
  const found = new Map<number, ProcInfo>();
  const queue: number[] = [];
  const keep = (p: ProcInfo) => {
    if (found.has(p.pid)) return;
    found.set(p.pid, p);
    queue.push(p.pid);
  };
  const leader = procInfo(w.leader.pid);
  if (same(leader, w.leader)) keep(leader);
  for (const s of w.seen.values()) {
    const here = procInfo(s.pid);
    if (same(here, s)) keep(here);
  }
  while (queue.length > 0) {
    for (const pid of childrenOf(queue.pop()!)) {
      const child = procInfo(pid);
      if (child !== null && pid !== process.pid) keep(child);
    }
  }
  return found;
}

/**
 * Every process that carries agentport's tag: what its agents started, also
 * what left their tree at once (a double-forked setsid daemon is handed to
 * agentport, then to init when agentport dies, and was never seen in the tree).
 */
function tagged(tag: string): ProcessRef[] {
  if (!HAS_PROC) return [];
  return readdirSync("/proc")
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid > 1 && pid !== process.pid && carriesTag(pid, tag) === true)
    .map((pid) => ({ pid, start: procInfo(pid)?.start ?? "" }));
}

/** The same from one look at every process (no children files: `ps`, or /proc without them). */
function scanned(w: Watched): Map<number, ProcInfo> {
  const procs = listProcesses();
  const alive = new Set(procs.map((p) => `${p.pid}:${p.start}`));
  const seen = new Map([...w.seen].filter(([pid, p]) => alive.has(`${pid}:${p.start}`)));
  const { roots, groups } = reach(w.leader, [...seen.values()], procs);
  for (const p of treeOf(roots, groups, procs)) seen.set(p.pid, p);
  return seen;
}

/** `agentport __keeper`: watch until the pipe closes, then kill what is left. */
export async function runKeeper(): Promise<number> {
  const watched = new Map<number, Watched>();
  // Ctrl-C and a hang-up are agentport's to handle; a TERM asks the keeper to end now, agents with it.
  process.on("SIGINT", () => {});
  process.on("SIGHUP", () => {});
  process.on("SIGPIPE", () => {});
  // agentport's tag, read while it lives: what its agents and all they start carry.
  const tag = agentTag(runnerIdentity(process.ppid));
  const sweep = () => {
    for (const w of watched.values()) killTree(w.leader, [...w.seen.values()]);
    watched.clear();
    for (const p of tagged(tag)) killTree(p);
  };
  process.on("SIGTERM", () => {
    sweep();
    process.exit(0);
  });
  const remember = () => {
    for (const w of watched.values()) w.seen = WALKABLE ? below(w) : scanned(w);
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
