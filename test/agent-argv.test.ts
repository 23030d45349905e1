// The codex, gemini and opencode command lines from the request: tables.
import { describe, expect, test } from "bun:test";
import { codexArgv, CODEX_SANDBOX, isThreadId } from "../src/agents/codex/argv.ts";
import { isOpencodeSession, opencodeArgv } from "../src/agents/opencode/argv.ts";
import { DEFAULT_GEMINI_MODEL, GEMINI_APPROVAL, geminiArgv } from "../src/agents/gemini/argv.ts";
import { PERMISSION_MODES } from "../src/core/agents.ts";

describe("codex argv", () => {
  test("the prompt is stdin (-), never argv; --skip-git-repo-check only outside a repository", () => {
    expect(codexArgv({ bin: "codex", inGit: false })).toEqual(["codex", "exec", "--json", "--skip-git-repo-check", "-"]);
    expect(codexArgv({ bin: "codex", inGit: true })).toEqual(["codex", "exec", "--json", "-"]);
  });

  test("model, sandbox, effort and schema before `resume ID`", () => {
    const argv = codexArgv({
      bin: "codex",
      inGit: true,
      model: "openai/gpt-5.5",
      permissionMode: "acceptEdits",
      thinking: "xhigh",
      outputSchema: "/r/s.json",
      resumeThread: "01a23055-c5e4-77c3-9cc6-5ee08d532bb9",
    });
    expect(argv).toEqual([
      "codex",
      "exec",
      "--json",
      "-m",
      "gpt-5.5",
      "--sandbox",
      "workspace-write",
      "-c",
      'model_reasoning_effort="high"',
      "--output-schema",
      "/r/s.json",
      "resume",
      "01a23055-c5e4-77c3-9cc6-5ee08d532bb9",
      "-",
    ]);
  });

  test("every permission mode has a sandbox; only bypassPermissions writes anywhere", () => {
    expect(PERMISSION_MODES.map((m) => CODEX_SANDBOX[m])).toEqual([
      "read-only",
      "workspace-write",
      "read-only",
      "danger-full-access",
      "read-only",
    ]);
  });

  test("only a UUID is a thread codex resumes (any other id silently starts a new thread)", () => {
    expect(isThreadId("01a23055-c5e4-77c3-9cc6-5ee08d532bb9")).toBe(true);
    expect(isThreadId("my-thread")).toBe(false);
  });
});

describe("gemini argv", () => {
  test("the model is always pinned, the id chosen here, --skip-trust only when trusted", () => {
    expect(geminiArgv({ bin: "gemini", sessionId: "s1", resume: false, trusted: false })).toEqual([
      "gemini",
      "--output-format",
      "stream-json",
      "-m",
      DEFAULT_GEMINI_MODEL,
      "--session-id",
      "s1",
    ]);
    expect(geminiArgv({ bin: "gemini", sessionId: "s1", resume: true, trusted: true, model: "google/gemini-2.5-pro" })).toEqual([
      "gemini",
      "--output-format",
      "stream-json",
      "-m",
      "gemini-2.5-pro",
      "--resume",
      "s1",
      "--skip-trust",
    ]);
  });

  test("approval modes and tools in gemini's words", () => {
    expect(PERMISSION_MODES.map((m) => GEMINI_APPROVAL[m])).toEqual(["default", "auto_edit", "plan", "yolo", "default"]);
    const argv = geminiArgv({
      bin: "gemini",
      sessionId: "s",
      resume: false,
      trusted: false,
      permissionMode: "acceptEdits",
      tools: ["read", "bash", "grep", "read"],
    });
    expect(argv.slice(-4)).toEqual(["--approval-mode", "auto_edit", "--allowed-tools", "read_file,run_shell_command,grep_search"]);
  });
});

describe("opencode argv", () => {
  test("json records, the prompt never on argv (it would be quoted), the model as opencode names it, -s for a resume", () => {
    expect(opencodeArgv({ bin: "opencode" })).toEqual(["opencode", "run", "--format", "json"]);
    expect(opencodeArgv({ bin: "opencode", model: "standin/standin-model", resumeSession: "ses_dcfa47bc2ffes2QHixm7u6s6UJ" })).toEqual([
      "opencode",
      "run",
      "--format",
      "json",
      "-m",
      "standin/standin-model",
      "-s",
      "ses_dcfa47bc2ffes2QHixm7u6s6UJ",
    ]);
  });

  test("only bypassPermissions approves asks (--auto); every other mode keeps opencode's rules", () => {
    expect(PERMISSION_MODES.map((m) => opencodeArgv({ bin: "o", permissionMode: m }).includes("--auto"))).toEqual([
      false,
      false,
      false,
      true,
      false,
    ]);
  });

  test("a resumable session is one opencode named", () => {
    expect(isOpencodeSession("ses_dcfa47bc2ffes2QHixm7u6s6UJ")).toBe(true);
    expect(isOpencodeSession("0c3e0c55-1111-4222-8333-444455556666")).toBe(false);
  });
});
