// The inventory the agentport extension writes (a stream entry or a file): pi's version and the extensions it loaded.
import type { Json } from "../record.ts";
import { clean } from "../text.ts";

export const INVENTORY_ENTRY = "agentport-inventory";

export interface Inventory {
  piVersion: string;
  extensions: string[];
}

/** An inventory object, as the agentport extension writes it (stream entry or file). */
export function readInventory(data: unknown): Inventory | null {
  if (data === null || typeof data !== "object") return null;
  const d = data as Json;
  const extensions = Array.isArray(d.extensions)
    ? d.extensions.filter((x): x is string => typeof x === "string").map((x) => clean(x, 80))
    : [];
  return { piVersion: clean(d.pi_version, 40), extensions };
}

/** An `entry_appended` entry: the inventory when it is one, else null. */
export function inventoryOf(entry: unknown): Inventory | null {
  if (entry === null || typeof entry !== "object") return null;
  const e = entry as Json;
  if (e.customType !== INVENTORY_ENTRY || e.data === null || typeof e.data !== "object") return null;
  return readInventory(e.data);
}
