// Ctrl-C (and SIGTERM) of agentport: abort the run, whose driver kills the
// agent's process group; a second Ctrl-C exits at once.
let controller: AbortController | null = null;

export function interruptSignal(): AbortSignal {
  if (controller !== null) return controller.signal;
  const c = new AbortController();
  controller = c;
  const onSignal = () => {
    if (c.signal.aborted) process.exit(130);
    c.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.on("SIGHUP", onSignal);
  // `agentport cancel`: the same stop, with its reason for the verdict.
  process.on(CANCEL_SIGNAL, () => c.abort(CANCELLED));
  return c.signal;
}

/** The signal `agentport cancel` sends a runner, and the reason its verdict then gives. */
export const CANCEL_SIGNAL = "SIGUSR2";
export const CANCELLED = "cancelled by agentport cancel";
