// What one phase of the ACP client is given: the run's folder and prompt, the
// permission answerers, the resume and the callbacks for the run folder. Pure.
import type { PermissionMode } from "../agents.ts";
import type { LoopObserver } from "../loop.ts";
import type { PermissionPolicy, PhysicalPath } from "../permissions.ts";
import type { ProgressSink } from "../progress.ts";
import type { Json } from "../record.ts";
import type { PermissionAsker } from "./permission.ts";

export interface AcpClientOptions {
  cwd: string;
  prompt: string;
  /** The agent's own session id, once session/new gave it. */
  onSession?: (agentSessionId: string) => void;
  /** Every permission answer, for the run folder. */
  recordAnswer?: (answer: Json) => void;
  emit?: ProgressSink;
  loop?: LoopObserver;
  permissionMode?: PermissionMode;
  /** --permissions FILE: its rules answer every permission request instead of the mode. */
  policy?: PermissionPolicy;
  /** Where a requested path really lands, for the policy (default: nowhere inside, so no path rule allows). */
  physical?: PhysicalPath;
  /** Ask agentport's own client (`agentport acp`) instead of the mode; null: it could not answer. */
  askPermission?: PermissionAsker;
  /** The agent's session to load (a resume); else a new one. */
  loadSessionId?: string;
  earlierCostMicroUsd?: number;
  clientVersion?: string;
}
