// The briefs of a batch and the demo spec. The prime reads and writes
// nothing: it is the shared prefix every arm starts from, paid once. An arm
// implements from there without reading the spec again; an arm of an agent
// that cannot start from a prime reads the spec itself (soloBrief).

import type { EnvelopeDelivery } from "../core/instructions.ts";

export interface BriefInput {
  /** The spec, as the agent should open it (relative to its folder when inside it). */
  spec: string;
  /** The spec folder, relative to the agent's folder. */
  specDir: string;
  gates: string[];
}

/** How the envelope is handed over: pi's report tool, or a fenced block ending the final message. */
const report = (delivery: EnvelopeDelivery) =>
  "tool" in delivery ? `call ${delivery.tool} once` : "end your final message with the envelope, one fenced ```json block";

export function primeBrief(b: BriefInput, delivery: EnvelopeDelivery): string {
  return [
    "This first step is READING ONLY.",
    `- Read the spec in full: ${b.spec}`,
    "- Read every file it names, and the existing tests around them.",
    "- Write NOTHING, and run no command that changes the repository.",
    `- When you have read everything, ${report(delivery)}: status "success", in "summary" at most five lines on what you will change, and changed_files: [] (you have changed nothing yet).`,
  ].join("\n");
}

export function armBrief(b: BriefInput, delivery: EnvelopeDelivery): string {
  return implementBrief(
    b,
    delivery,
    `You have already read the spec and the files it concerns: now implement the spec ${b.spec}, without reading it again, exactly, and nothing more.`,
  );
}

/** An arm with no prime behind it: it reads the spec, then implements it. */
export function soloBrief(b: BriefInput, delivery: EnvelopeDelivery): string {
  return implementBrief(
    b,
    delivery,
    `Read the spec ${b.spec} in full, and the files it names and their tests: then implement it, exactly, and nothing more.`,
  );
}

function implementBrief(b: BriefInput, delivery: EnvelopeDelivery, first: string): string {
  const lines = [
    first,
    "- Change only what the spec asks for, and keep the existing tests passing.",
    `- Do not touch ${b.specDir}/. Do not stage and do not commit: leave your changes in the working tree.`,
  ];
  if (b.gates.length > 0)
    lines.push(`- Your work is then checked by these commands, each of which must exit 0: ${b.gates.map((g) => `\`${g}\``).join(", ")}.`);
  lines.push(
    `- At the end, ${report(delivery)}: status "success" when the spec is implemented (else "failure"), a short summary, and changed_files: every file you created or changed, relative to your working folder.`,
  );
  return lines.join("\n");
}

/** `agentport bon --demo` writes this to `<spec folder>/bon-demo.md`. */
export const DEMO_SPEC = `# Word count

Add a module \`src/word-count.ts\` that exports a function
\`wordCount(text: string): number\`: the number of words separated by whitespace
(spaces, tabs, line breaks), and 0 for an empty string or one made of whitespace only.

Add its test \`src/word-count.test.ts\` (bun test): an empty string, one word,
several spaces in a row, line breaks.

Touch no other file.
`;
