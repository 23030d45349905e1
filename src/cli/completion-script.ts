// Completion scripts for bash, zsh and fish, from the commands' specs: the
// command names first, then each command's flags (and an enum flag's values).

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

export interface Spec {
  name: string;
  description: string;
  flags: { name: string; description: string; takesValue: boolean; values: string[] }[];
}

/** The first clause of a description, short enough for a completion menu. */
const short = (text: string): string => {
  const first = text.split(/(?<=[a-z)]);|:\s|\s\(/)[0] ?? "";
  return first.length > 70 ? `${first.slice(0, 69)}…` : first;
};
/** A word inside single quotes. */
const sq = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

function bash(specs: Spec[]): string {
  const cases = specs.map((s) => `    ${s.name}) opts=${sq(s.flags.map((f) => `--${f.name}`).join(" "))} ;;`);
  const values = specs.flatMap((s) =>
    s.flags
      .filter((f) => f.values.length > 0)
      .map((f) => `    "${s.name} --${f.name}") COMPREPLY=($(compgen -W ${sq(f.values.join(" "))} -- "$cur")); return ;;`),
  );
  return `# agentport completion for bash: source it, or save it as /etc/bash_completion.d/agentport
_agentport() {
  local cur prev opts
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W ${sq(specs.map((s) => s.name).join(" "))} -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]} $prev" in
${values.join("\n")}
  esac
  case "\${COMP_WORDS[1]}" in
${cases.join("\n")}
    *) opts="" ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o default -F _agentport agentport
`;
}

function zsh(specs: Spec[]): string {
  // _arguments specs: --flag[description]:value:(a b), with [ ] : escaped in the description.
  const escapeZsh = (text: string) => short(text).replace(/[[\]:\\]/g, (c) => `\\${c}`);
  const flag = (f: Spec["flags"][number]) =>
    sq(
      `--${f.name}[${escapeZsh(f.description)}]${f.takesValue ? `:${f.name}:${f.values.length > 0 ? `(${f.values.join(" ")})` : "_files"}` : ""}`,
    );
  const cases = specs.map((s) => `    ${s.name})\n      _arguments -s ${s.flags.map(flag).join(" ")} '*:file:_files' ;;`);
  return `#compdef agentport
# agentport completion for zsh: save it as _agentport in a folder of $fpath
_agentport() {
  local -a commands
  commands=(
${specs.map((s) => `    ${sq(`${s.name}:${short(s.description).replace(/:/g, "\\:")}`)}`).join("\n")}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  local cmd=$words[2]
  shift words
  (( CURRENT-- ))
  case $cmd in
${cases.join("\n")}
  esac
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _agentport "$@"
else
  compdef _agentport agentport
fi
`;
}

function fish(specs: Spec[]): string {
  const lines = [
    "# agentport completion for fish: save it as ~/.config/fish/completions/agentport.fish",
    "complete -c agentport -f",
    ...specs.map((s) => `complete -c agentport -n __fish_use_subcommand -a ${s.name} -d ${sq(short(s.description))}`),
    ...specs.flatMap((s) =>
      s.flags.map(
        (f) =>
          `complete -c agentport -n ${sq(`__fish_seen_subcommand_from ${s.name}`)} -l ${f.name}${f.takesValue ? (f.values.length > 0 ? ` -x -a ${sq(f.values.join(" "))}` : " -r -F") : ""} -d ${sq(short(f.description))}`,
      ),
    ),
  ];
  return `${lines.join("\n")}\n`;
}

export function completionScript(shell: Shell, specs: Spec[]): string {
  switch (shell) {
    case "bash":
      return bash(specs);
    case "zsh":
      return zsh(specs);
    case "fish":
      return fish(specs);
  }
}
