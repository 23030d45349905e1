// Claude Code tools: the one input shown per tool. A tool not listed shows its
// name only. Bash shows its `description`, never its `command`: a command line
// is where credentials are typed.
export const TOOL_DETAILS: Readonly<Record<string, string>> = {
  Read: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  Write: "file_path",
  NotebookEdit: "notebook_path",
  Grep: "pattern",
  Glob: "pattern",
  Bash: "description",
  Task: "description",
  Agent: "description",
};

export const PATH_INPUTS: ReadonlySet<string> = new Set(["file_path", "notebook_path"]);

/** The tool through which the model asks the user a question; under -p nobody answers. */
export const QUESTION_TOOL = "AskUserQuestion";
