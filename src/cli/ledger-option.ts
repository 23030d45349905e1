// Which ledger a command uses: --ledger URL, else $AGENTPORT_LEDGER, else
// `ledger` in agentport.json, else sqlite:<home>/ledger.sqlite. Opening it
// is an environment fault when it fails (exit 5): a run is never started
// unrecorded.
import { existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import { configPath, type LoadedConfig } from "../config/load.ts";
import { connectLedger, parseLedgerUrl, shownLocation, type Ledger, type LedgerLocation } from "../io/ledger.ts";
import { urlSecrets } from "../io/ledger-url.ts";
import { secrets } from "../core/redact.ts";
import { stateHome } from "../io/paths.ts";
import { needsTidy, tidyLedger } from "../io/reap.ts";
import { environmentError, usageError } from "./errors.ts";
import { verbosityArgs } from "./common.ts";

export const LEDGER_ENV = "AGENTPORT_LEDGER";

/** The state folder option every command that reads or writes the ledger takes. */
export const HOME_ARG = {
  type: "string" as const,
  description: "State folder (else $AGENTPORT_HOME, $XDG_STATE_HOME/agentport, ~/.local/state/agentport)",
};

export const ledgerArgs = {
  ledger: {
    type: "string" as const,
    valueHint: "URL",
    description: `The ledger: sqlite:PATH (default <home>/ledger.sqlite) or postgres://USER@HOST/DB (else $${LEDGER_ENV}, else "ledger" in agentport.json); its password is never shown`,
  },
};

/** The options of a command that works on the ledger: where it is, and how much to say. */
export const ledgerCommandArgs = { home: HOME_ARG, ...ledgerArgs, ...verbosityArgs };

export interface LedgerChoice {
  home: string;
  location: LedgerLocation;
  /** The location fit to print: a path, or the URL without its password. */
  shown: string;
}

type Args = Record<string, unknown>;

/** A ledger URL written in agentport.json: a relative sqlite: path is the config file's. */
export function ledgerFromConfig(loaded: LoadedConfig | null | undefined): string | undefined {
  const url = loaded?.config.ledger;
  if (url === undefined || loaded === null || loaded === undefined) return undefined;
  const path = url.startsWith("sqlite:") ? url.slice("sqlite:".length) : null;
  return path !== null && path !== "" && !isAbsolute(path) ? `sqlite:${configPath(loaded, path)}` : url;
}

/**
 * The ledger of a command: its flags (`ledger`, `home`), the environment, the
 * project config (already trust-checked: projectConfig; null for none, as when
 * reading the trust itself, which never comes from the config it is about).
 */
export function ledgerChoice(
  args: Args,
  home: string,
  config: LoadedConfig | null,
  env: Record<string, string | undefined> = process.env,
): LedgerChoice {
  const flag = typeof args.ledger === "string" && args.ledger !== "" ? args.ledger : undefined;
  const url = flag ?? (env[LEDGER_ENV] || undefined) ?? ledgerFromConfig(config);
  const parsed = parseLedgerUrl(url, home);
  if (!parsed.ok) throw usageError(`--ledger ${parsed.error}`);
  // Whatever quotes the URL from here on (a server's message, a stack) loses its password.
  if (parsed.location.kind === "postgres") secrets.addValues(urlSecrets(parsed.location.url));
  return { home, location: parsed.location, shown: shownLocation(parsed.location) };
}

const chosen = (target: string | LedgerChoice): LedgerChoice => (typeof target === "string" ? ledgerChoice({}, target, null) : target);

/** How a ledger is opened: `readonly` for reading commands (nothing created or written; a read-only home works). */
export interface OpenOptions {
  readonly?: boolean;
}

/** The ledger when it exists, else null: reading commands write nothing on a fresh machine (a server is always there to ask). */
export async function openExistingLedger(target: string | LedgerChoice, options: OpenOptions = {}): Promise<Ledger | null> {
  const choice = chosen(target);
  if (choice.location.kind === "sqlite" && !existsSync(choice.location.path)) return null;
  return openLedger(choice, options);
}

/**
 * Open the ledger (a home alone: the default choice for it), or an
 * environment error naming it. First, what runners that are gone left open
 * is finished (reap.ts) — for a reading command through a short writable
 * connection, tried and let go when the home cannot be written.
 */
export async function openLedger(target: string | LedgerChoice, options: OpenOptions = {}): Promise<Ledger> {
  const choice = chosen(target);
  let ledger: Ledger;
  try {
    ledger = await connectLedger(choice.home, choice.location, options);
  } catch (error) {
    throw environmentError(`ledger: ${(error as Error).message}`);
  }
  if (!options.readonly) await tidyLedger(ledger, choice.home);
  else if (await needsTidy(ledger, choice.home)) await tidyIfWritable(choice);
  return ledger;
}

async function tidyIfWritable(choice: LedgerChoice): Promise<void> {
  try {
    await using ledger = await connectLedger(choice.home, choice.location);
    await tidyLedger(ledger, choice.home);
  } catch {
    // A read-only or full home: the next command that can write tidies up.
  }
}

/** The ledger of a resolved run: its flags already carry the environment's and the config's `ledger`. */
export function setupLedger(setup: { args: Args; common: { home: string } }): LedgerChoice {
  return ledgerChoice(setup.args, setup.common.home, null);
}

/** The choice for a command that takes --ledger and --home only; `config` is the (trusted) project config, or null. */
export function commandLedger(args: Args, config: LoadedConfig | null): LedgerChoice {
  return ledgerChoice(args, stateHome(typeof args.home === "string" ? args.home : undefined), config);
}
