// The fake opencode server's permission scenario the policy-file tests share
// (--permissions with opencode --serve, alone and behind agentport acp): a
// bash ask, an edit outside the folder, an edit inside it; then the answer.
export const OPENCODE_POLICY_SCENARIO = {
  steps: [
    { refused: "touch made-by-shell.txt" },
    { write: "../outside.txt" },
    { write: "src/inside.txt" },
    { text: "Done." },
    { done: true },
  ],
};
