// Live progress on stderr: one updating status line on a terminal, one line
// per event otherwise, NDJSON with --progress json. Events arrive already
// redacted by the reducers (shape) and pass the boundary's redactor (value) here.
import { progressRecord, type ProgressEvent, type ProgressSink } from "../core/progress.ts";
import { logSubject } from "./output.ts";
import { columnsOf, isTerminal, writeStderr } from "./fd-out.ts";
import { secrets } from "../core/redact.ts";
import { spendParts } from "../core/totals.ts";

export const PROGRESS_MODES = ["auto", "lines", "json", "off"] as const;
export type ProgressMode = (typeof PROGRESS_MODES)[number];

/** An event in words, for a person (empty: not worth a line). */
export function describe(event: ProgressEvent): string {
  switch (event.kind) {
    case "started":
      return `started${event.detail ? ` (${event.detail})` : ""}`;
    case "thinking":
      return event.thinking_tokens ? `thinking (~${event.thinking_tokens} tokens)` : "thinking";
    case "assistant_text":
      return "writing";
    case "tool_started":
      return `tool ${event.tool || "?"}${event.detail ? ` ${event.detail}` : ""}`;
    case "tool_finished":
      return `tool ${event.tool || "?"} done`;
    case "tool_failed":
      return `tool ${event.tool || "?"} failed`;
    case "provider_retry":
      return `provider retry${event.detail ? ` (${event.detail})` : ""}`;
    case "activity":
      return "";
  }
}

export interface ProgressView {
  sink: ProgressSink;
  /** Clear the status line before the final output. */
  close(): void;
  /** After the final output: in json mode, the run's last record (its verdict). */
  end(last: Record<string, unknown>): void;
}

const nothing = () => {};

/** `model`: the one asked for, shown on the status line until the stream names the one that runs. */
export function progressView(mode: ProgressMode, agent: string, model?: string | null): ProgressView {
  const tty = isTerminal(2);
  const err = { write: (text: string) => writeStderr(secrets.text(text)) };
  const effective = mode === "auto" ? (tty ? "status" : "lines") : mode;
  if (effective === "off") return { sink: nothing, close: nothing, end: nothing };
  if (effective === "json") {
    return {
      sink: (event, subject) => {
        if (subject !== undefined) Object.assign(logSubject, { session_id: subject.sessionId, agent: subject.agent });
        const record = progressRecord(event, subject ?? { sessionId: null, agent });
        err.write(`${JSON.stringify(record)}\n`);
      },
      close: nothing,
      end: (last) => void err.write(`${JSON.stringify(last)}\n`),
    };
  }
  if (effective === "lines") {
    return {
      sink: (event) => {
        const text = describe(event);
        if (text) err.write(`${agent}: ${text}\n`);
      },
      close: nothing,
      end: nothing,
    };
  }
  return statusLine(agent, model ?? "", { ...err, columns: columnsOf(2) });
}

/** Seconds as a person reads them: 42s, 3m05s. */
const elapsed = (ms: number): string => {
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
};

/** The one updating line on a terminal: agent and model, elapsed time, tokens and cost so far, what it does now; it ticks every second, so a long model call does not look frozen. */
function statusLine(agent: string, asked: string, err: { write(text: string): unknown; columns?: number }): ProgressView {
  const started = performance.now();
  let model = asked;
  let doing = "starting";
  let spend = "";
  let shown = false;
  // A pseudo-terminal may say 0 columns: then 80.
  const width = () => Math.max(20, (err.columns || 80) - 1);
  const render = () => {
    const fields = [`${agent}${model ? ` ${model}` : ""}`, elapsed(performance.now() - started), ...(spend ? [spend] : []), doing];
    err.write(`\r\u001b[K${fields.join(" · ").slice(0, width())}`);
    shown = true;
  };
  const tick = setInterval(render, 1_000);
  tick.unref();
  render();
  return {
    sink: (event) => {
      if (event.kind === "started" && event.detail) model = event.detail;
      // Nothing counted yet is not worth the room.
      const counted = event.tokens != null && Object.values(event.tokens).some((n) => n > 0) ? event.tokens : null;
      const now = event.tokens === undefined ? spend : spendParts(event.cost_micro_usd ?? null, counted).join(" · ");
      const text = describe(event);
      if (!text && now === spend) return;
      spend = now;
      if (text) doing = text;
      render();
    },
    close: () => {
      clearInterval(tick);
      if (shown) err.write("\r\u001b[K");
    },
    end: nothing,
  };
}
