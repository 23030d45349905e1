// The CLI's errors live in core (the adapters raise them too).
export * from "../core/errors.ts";
