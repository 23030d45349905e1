// A schema built on its first use, with zod loaded on the first use of any.
// Loading zod costs several ms of CPU at start-up and each of its
// constructors about 0.1 ms (the bytecode runs cold), and a plain
// `agentport run` parses nothing with a schema: it loads zod never (README,
// Benchmarks). Pure: the runtime hands zod over (src/io/zod.ts under Bun;
// a Deno script imports it itself), so no file here imports it at runtime.
import type { z } from "zod";

/**
 * The part of zod the schemas build with. Named, not all of `z`: handed over
 * whole, zod's namespace would pull every locale into the bundle.
 */
export type Zod = Pick<
  typeof z,
  | "array"
  | "boolean"
  | "enum"
  | "fromJSONSchema"
  | "looseObject"
  | "number"
  | "object"
  | "record"
  | "strictObject"
  | "string"
  | "toJSONSchema"
  | "union"
  | "unknown"
>;

let load: (() => Zod) | null = null;
let loaded: Zod | null = null;

/** How zod is loaded, once, when a schema is first used. */
export function provideZod(loader: () => Zod): void {
  load = loader;
}

/** zod itself, for what is no schema (JSON Schema in and out): loaded now, if it was not yet. */
export function loadZod(): Zod {
  if (loaded !== null) return loaded;
  if (load === null)
    throw new Error("lazySchema: zod was never provided; load src/io/zod.ts first (under Bun), or call provideZod(() => z)");
  return (loaded = load());
}

export function lazySchema<T extends object>(build: (z: Zod) => T): T {
  let built: T | undefined;
  const real = (): T => (built ??= build(loadZod()));
  return new Proxy({} as T, {
    get(_target, key) {
      const schema = real();
      const value: unknown = Reflect.get(schema, key, schema);
      return typeof value === "function" ? value.bind(schema) : value;
    },
    has: (_target, key) => Reflect.has(real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
}
