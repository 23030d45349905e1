// `agentport prices [MODEL]`: the prices cost is derived at (USD per million
// tokens): agentport.json's `prices` over the table shipped in the binary
// (generated from pi's model registry: its source and date are printed).
import { defineCommand } from "citty";
import { PRICE_DATE, PRICE_SOURCE, PRICE_TABLE } from "../../core/price-table.ts";
import { priceOf, type KnownPrice } from "../../core/prices.ts";
import { safeJson } from "../../core/text.ts";
import { folder, projectConfig } from "../agent-options.ts";
import { verbosityArgs } from "../common.ts";
import { usageError } from "../errors.ts";
import { log, setVerbosity, writeResult } from "../output.ts";
import { HOME_ARG } from "../ledger-option.ts";

const row = (model: string, k: KnownPrice) => ({ model, ...k.price, from: k.from });
const line = (r: ReturnType<typeof row>) =>
  `${r.model}  in ${r.input}  out ${r.output}  cache read ${r.cache_read ?? r.input}  cache write ${r.cache_write ?? r.input}  (${r.from})`;

export const pricesCommand = defineCommand({
  meta: {
    name: "prices",
    description:
      "Show the price (USD per million tokens) a cost is derived at, for MODEL or every model: agentport.json `prices` over the shipped table",
  },
  args: {
    model: { type: "positional", required: false, description: "A model id (gpt-5, openai/gpt-5, gemini-2.5-pro…)" },
    json: { type: "boolean", description: "One JSON object" },
    cwd: { type: "string", description: "Where the project config is looked for (default: the current folder)" },
    config: {
      type: "string",
      valueHint: "FILE",
      description: "The project config (else $AGENTPORT_CONFIG, else the nearest agentport.json)",
    },
    home: HOME_ARG,
    ...verbosityArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    const config = await projectConfig(args, folder(args.cwd));
    const own = config?.config.prices ?? {};
    const about = { source: PRICE_SOURCE, date: PRICE_DATE, unit: "USD per million tokens" };
    if (args.model !== undefined && args.model !== "") {
      const known = priceOf(args.model, own);
      if (known === null)
        throw usageError(
          `no price for model "${args.model}": add it under "prices" in agentport.json ({"${args.model}": {"input": …, "output": …}})`,
        );
      const r = row(args.model, known);
      await writeResult(args.json ? safeJson({ ...r, ...about }) : line(r));
      return 0;
    }
    const models = [...new Set([...Object.keys(own), ...Object.keys(PRICE_TABLE)])].sort();
    const rows = models.map((m) => row(m, priceOf(m, own) as KnownPrice));
    if (args.json) await writeResult(safeJson({ ...about, prices: rows }));
    else {
      log.info(`prices from ${PRICE_SOURCE} (${PRICE_DATE}), USD per million tokens; agentport.json "prices" overrides`);
      await writeResult(rows.map(line).join("\n"));
    }
    return 0;
  },
});
