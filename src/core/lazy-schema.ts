// A schema built on its first use. zod's constructors cost about 0.1 ms a
// call at start-up (the bytecode runs cold), and a run never parses most of
// what the schemas describe: built eagerly, they were several ms of
// `agentport run`'s overhead (README, Benchmarks). Pure.
export function lazySchema<T extends object>(build: () => T): T {
  let built: T | undefined;
  const real = (): T => (built ??= build());
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
