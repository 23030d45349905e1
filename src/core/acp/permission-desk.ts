// The ACP client's answers to what the agent asks of it: a permission request
// is answered by the policy file, the permission mode or agentport's own
// client (`agentport acp`), in that order, and recorded; anything else is
// "method not found" (the client offers no method). Every request gets an
// answer, never silence. Pure.
import { MAX_REFUSED } from "../reduction.ts";
import { NO_DISK } from "../permissions.ts";
import { objectOf, type Json } from "../record.ts";
import { clean } from "../text.ts";
import type { Refused } from "../verdict.ts";
import { answerPermission, clientAnswer } from "./permission.ts";
import { RPC_ERRORS, type RpcError, type RpcId } from "./protocol.ts";
import type { AcpClientOptions } from "./client-options.ts";
import type { AcpTools } from "./tools.ts";

/** The client's counters this desk moves (the reducer's summary). */
export interface DeskCounts {
  early_messages: number;
  unknown_methods: number;
  permission_requests: number;
  permissions_forwarded: number;
  permissions_allowed: number;
  refused_requests: number;
}

type Options = Pick<AcpClientOptions, "permissionMode" | "policy" | "cwd" | "physical" | "askPermission" | "recordAnswer">;

export class PermissionDesk {
  constructor(
    private readonly options: Options,
    private readonly tools: AcpTools,
    private readonly counts: DeskCounts,
    private readonly refused: Refused[],
    private readonly reply: (id: RpcId, result: unknown, error: RpcError | null) => void,
  ) {}

  /** A request from the agent; `early` while the session is not set up yet. */
  request(id: RpcId, method: string, params: Json, early: boolean): void {
    if (early) {
      this.counts.early_messages += 1;
      this.reply(id, null, { code: RPC_ERRORS.invalidRequest, message: "the session is not set up yet" });
      return;
    }
    switch (method) {
      case "session/request_permission":
        this.permission(id, params);
        return;
      default:
        this.counts.unknown_methods += 1;
        this.reply(id, null, { code: RPC_ERRORS.methodNotFound, message: `agentport does not serve ${clean(method, 60)}` });
    }
  }

  private permission(id: RpcId, params: Json): void {
    this.counts.permission_requests += 1;
    const call = objectOf(params.toolCall) ?? {};
    this.tools.observe({ ...call, status: undefined });
    const path = this.tools.detailOf(call);
    const byRules = () =>
      answerPermission(
        {
          mode: this.options.permissionMode,
          policy: this.options.policy,
          cwd: this.options.cwd,
          physical: this.options.physical ?? NO_DISK,
        },
        call,
        params.options,
        path,
      );
    // A policy file or a permission mode the user gave answers at once; else a client that can be asked (agentport acp's) is, and the default rule answers only when it cannot.
    const ask = this.options.policy === undefined && this.options.permissionMode === undefined ? this.options.askPermission : undefined;
    if (ask === undefined) {
      this.settle(id, call, byRules());
      return;
    }
    this.counts.permissions_forwarded += 1;
    void ask({ toolCall: call, options: params.options }).then(
      (outcome) => this.settle(id, call, outcome === null ? byRules() : clientAnswer(call, params.options, outcome, path)),
      () => this.settle(id, call, byRules()),
    );
  }

  private settle(id: RpcId, call: Json, answer: ReturnType<typeof answerPermission>): void {
    this.reply(id, answer.outcome, null);
    this.options.recordAnswer?.(answer.record);
    if (answer.refused === null) {
      this.counts.permissions_allowed += 1;
      return;
    }
    this.tools.close(call.toolCallId);
    this.counts.refused_requests += 1;
    if (this.refused.length < MAX_REFUSED) this.refused.push(answer.refused);
  }
}
