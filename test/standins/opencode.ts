// The offline environment that runs the real opencode 1.18.33 against the
// chat-completions stand-in (./openai.ts), per the sheet's recipe
// (ground-truth/opencode-1.18.33.md §1): private XDG folders, the catalog
// fetch, autoupdate, sharing and the default plugins off, one custom provider
// `standin` whose model has a price (so opencode computes a cost).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { copyWarmHome } from "./opencode-home.ts";
import { basePath } from "./util.ts";

/** The model as opencode names it (`provider/model`). */
export const OPENCODE_STANDIN_MODEL = "standin/standin-model";
/** USD per million tokens in the stand-in model's config. */
export const OPENCODE_STANDIN_COST = { input: 1, output: 2 };

/** The folders of an offline opencode home under `<dir>/oc`: made, with `opencode.json` written for `standinUrl`. */
export function opencodeDirs(dir: string, standinUrl: string) {
  const root = join(dir, "oc");
  const xdg = {
    XDG_CONFIG_HOME: join(root, "config"),
    XDG_DATA_HOME: join(root, "data"),
    XDG_CACHE_HOME: join(root, "cache"),
    XDG_STATE_HOME: join(root, "state"),
  };
  const home = join(root, "home");
  const tmp = join(root, "tmp");
  for (const d of [...Object.values(xdg), home, tmp, join(xdg.XDG_CONFIG_HOME, "opencode")]) mkdirSync(d, { recursive: true });
  const config = {
    model: OPENCODE_STANDIN_MODEL,
    small_model: OPENCODE_STANDIN_MODEL,
    autoupdate: false,
    share: "disabled",
    provider: {
      standin: {
        npm: "@ai-sdk/openai-compatible",
        name: "Standin",
        options: { baseURL: standinUrl, apiKey: "sk-dummy" },
        models: { "standin-model": { name: "Standin Model", limit: { context: 100000, output: 8000 }, cost: OPENCODE_STANDIN_COST } },
      },
    },
  };
  writeFileSync(join(xdg.XDG_CONFIG_HOME, "opencode", "opencode.json"), JSON.stringify(config, null, 2) + "\n");
  const env: Record<string, string> = {
    PATH: basePath(),
    HOME: home,
    TMPDIR: tmp,
    LANG: "C.UTF-8",
    ...xdg,
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    NO_COLOR: "1",
  };
  return { root, xdg, env };
}

/**
 * Write `<dir>/oc/config/opencode/opencode.json` and return the env that runs opencode offline
 * against `standinUrl`. The home starts as a copy of the warm one (./opencode-home.ts): its own
 * database and config folder, already migrated and with opencode's plugin package installed.
 */
export function opencodeEnv(dir: string, standinUrl: string): Record<string, string> {
  copyWarmHome(join(dir, "oc"));
  return opencodeDirs(dir, standinUrl).env;
}

/** Whether a chat-completions request is opencode's title call for a new session (not part of the run). */
export const isTitleRequest = (req: Record<string, any>): boolean =>
  Array.isArray(req.messages) &&
  req.messages.some((m: any) => m?.role === "system" && typeof m.content === "string" && m.content.includes("title generator"));
