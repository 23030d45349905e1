// The loop observer hook the reducers feed. Only names and digests cross it.

export interface LoopObserver {
  /** A completed tool call: its name and a fingerprint of (name, input digest, result digest). */
  action(tool: string, fingerprint: string): void;
  /** The provider retried a request. */
  retry(): void;
  /** An assistant record arrived; `textDigest` is set when it carried text. */
  turn(textDigest?: string): void;
}

export function actionFingerprint(tool: string, inputDigest: string, resultDigest: string): string {
  return `${tool}:${inputDigest}:${resultDigest}`;
}
