// Where the ledger lives: `sqlite:PATH` (the default, <home>/ledger.sqlite)
// or a `postgres://` / `postgresql://` URL. A URL is shown, stored and
// reported only without its password (urlSecrets feeds the one redactor at
// the boundary, core/redact.ts, for anything that quotes it).
import { isAbsolute, join, resolve } from "node:path";
import { REDACTED } from "../core/redact.ts";

export type LedgerLocation = { kind: "sqlite"; path: string } | { kind: "postgres"; url: string };

export const DEFAULT_LEDGER_FILE = "ledger.sqlite";

export function ledgerPath(home: string): string {
  return join(home, DEFAULT_LEDGER_FILE);
}

/** The location a ledger URL names, or a one-line reason it is not one. `home` gives the default. */
export function parseLedgerUrl(
  text: string | undefined,
  home: string,
): { ok: true; location: LedgerLocation } | { ok: false; error: string } {
  if (text === undefined || text === "") return { ok: true, location: { kind: "sqlite", path: ledgerPath(resolve(home)) } };
  if (text.startsWith("sqlite:")) {
    const path = text.slice("sqlite:".length).replace(/^\/\/(?=\/)/, ""); // sqlite:///abs as well as sqlite:/abs
    if (path === "") return { ok: false, error: `${text}: sqlite: needs a file path (sqlite:/path/to/ledger.sqlite)` };
    return { ok: true, location: { kind: "sqlite", path: isAbsolute(path) ? path : resolve(path) } };
  }
  if (/^postgres(ql)?:\/\//.test(text)) {
    let parsed: URL;
    try {
      parsed = new URL(text);
    } catch {
      return { ok: false, error: `${redactUrl(text)}: not a valid URL` };
    }
    if (parsed.hostname === "" && !parsed.searchParams.has("host")) return { ok: false, error: `${redactUrl(text)}: names no host` };
    return { ok: true, location: { kind: "postgres", url: text } };
  }
  return { ok: false, error: `${redactUrl(text)}: a ledger is sqlite:PATH or postgres://USER@HOST/DB` };
}

/** `postgres://user:[redacted]@host/db`: the password (in the authority or a password= parameter) replaced. */
export function redactUrl(text: string): string {
  return (
    text
      // The password runs to the authority's last `@` (a URL parser reads p@ss in u:p@ss@host so).
      .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*):[^/?#]*@/i, `$1:${REDACTED}@`)
      .replace(/([?&](?:password|sslpassword)=)[^&#]*/gi, `$1${REDACTED}`)
  );
}

/** `text` with every appearance of the URL's password replaced, whatever quoted it. */
export function redactSecretOf(url: string, text: string): string {
  let out = text.split(url).join(redactUrl(url));
  for (const secret of urlSecrets(url)) out = out.split(secret).join(REDACTED);
  return out;
}

/** The secrets a URL carries: its password (as written and decoded), a password= or sslpassword= parameter. */
export function urlSecrets(url: string): string[] {
  const out: string[] = [];
  try {
    const parsed = new URL(url);
    if (parsed.password) out.push(parsed.password, decodeURIComponent(parsed.password));
    for (const key of ["password", "sslpassword"]) {
      const value = parsed.searchParams.get(key);
      if (value) out.push(value);
    }
  } catch {
    // not a URL: nothing more to hide than redactUrl did
  }
  return [...new Set(out)].filter((s) => s.length > 0);
}

/** The URL without its secrets (the password and password= parameters removed, not masked): what an agent may inherit. */
export function withoutSecrets(url: string): string {
  try {
    const parsed = new URL(url);
    if (!/^postgres(ql)?:$/.test(parsed.protocol)) return url;
    parsed.password = "";
    for (const key of ["password", "sslpassword"]) parsed.searchParams.delete(key);
    return parsed.toString();
  } catch {
    return redactUrl(url);
  }
}

/** How the location is shown: the file path, or the URL without its password. */
export function shownLocation(location: LedgerLocation): string {
  return location.kind === "sqlite" ? location.path : redactUrl(location.url);
}
