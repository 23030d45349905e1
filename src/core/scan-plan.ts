// A scan plan: per path of a record, what its value is for (scan.ts).
// "keep" builds it exactly as JSON.parse would; "digest" builds its structure
// but leaves every string undecoded; "skip" checks its syntax only. Unlisted
// paths keep. A plan lives next to its agent's reducer.

export type Mode = "keep" | "digest" | "skip";
/** An object's members by key (others: the rest), an array's items. */
export interface Fields {
  readonly fields?: Readonly<Record<string, Plan>>;
  readonly others?: Plan;
  readonly items?: Plan;
}
/** The members after `on` follow the case its string value names. */
export interface Switch {
  readonly on: string;
  readonly cases: Readonly<Record<string, Plan>>;
  readonly otherwise?: Plan;
}
export type Plan = Mode | Fields | Switch;

export const own = (record: object, key: string) => Object.prototype.hasOwnProperty.call(record, key);

export function memberPlan(plan: Plan, key: string): Plan {
  if (typeof plan === "string") return plan;
  if ("on" in plan) return "keep";
  return plan.fields !== undefined && own(plan.fields, key) ? plan.fields[key]! : (plan.others ?? "keep");
}

export function itemPlan(plan: Plan): Plan {
  if (typeof plan === "string") return plan;
  return "on" in plan ? "keep" : (plan.items ?? "keep");
}

export function caseOf(plan: Switch, value: unknown): Plan {
  return typeof value === "string" && own(plan.cases, value) ? plan.cases[value]! : (plan.otherwise ?? "keep");
}
