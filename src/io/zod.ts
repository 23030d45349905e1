// zod for the schemas (src/core/lazy-schema.ts), loaded on the first use of
// one: `require` inside the loader keeps zod out of the bundle's start-up, so
// a run that parses nothing with a schema never loads it. Imported first by
// src/cli/main.ts, by the tests (bunfig.toml preload) and by scripts that parse.
//
// It requires zod-module.ts, not "zod": a require of the package takes zod's
// CommonJS build, a second copy of zod in the binary beside the ES module the
// fake agents import.
import { provideZod } from "../core/lazy-schema.ts";

provideZod(() => (require("./zod-module.ts") as typeof import("./zod-module.ts")).zod);
