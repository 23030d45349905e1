// The repository a best-of-N end-to-end batch works on: one commit, and an
// untracked spec under specs/ asking for 42 in answer.txt (the gates check it).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export function git(cwd: string, ...args: string[]): string {
  const proc = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    cwd,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (proc.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${proc.stderr.toString()}`);
  return proc.stdout.toString();
}

/** `<dir>/repo`, made. */
export function specRepo(dir: string): string {
  const repo = join(dir, "repo");
  git(dir, "init", "-q", "-b", "main", repo);
  writeFileSync(join(repo, "README.md"), "# demo\n");
  git(repo, "add", ".");
  git(repo, "commit", "-qm", "init");
  mkdirSync(join(repo, "specs"));
  writeFileSync(
    join(repo, "specs", "task.md"),
    "# Task\n\nWrite the number 42, on one line, to answer.txt at the top of the repository.\n",
  );
  return repo;
}
