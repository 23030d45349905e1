// The two envelope fields a batch reads: status and summary (strings), changed_files.

export function changedFiles(envelope: unknown): string[] {
  const files = (envelope as { changed_files?: unknown } | null)?.changed_files;
  return Array.isArray(files) ? files.filter((f): f is string => typeof f === "string") : [];
}

export function envelopeField(envelope: unknown, key: string): string | null {
  const value = (envelope as Record<string, unknown> | null)?.[key];
  return typeof value === "string" ? value : null;
}
