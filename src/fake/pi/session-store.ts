// pi's session files: one JSON line an entry, a header first, ids chained through parentId.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Json } from "../../core/record.ts";
import { PiFailure } from "./failures.ts";
import { defaultSessionDir, fileStamp } from "./files.ts";

function loadEntries(path: string): Json[] {
  if (!existsSync(path)) return [];
  const entries: Json[] = [];
  for (const line of readFileSync(path, "utf8").trim().split("\n")) {
    if (!line.trim()) continue;
    try {
      entries.push(JSON.parse(line) as Json);
    } catch {
      // pi skips malformed lines
    }
  }
  const header = entries[0];
  if (!header || header.type !== "session" || typeof header.id !== "string") return [];
  return entries;
}

/** pi's SessionManager, reduced to what a one-shot run touches: the file appears at the first assistant message. */
export class SessionStore {
  entries: Json[] = [];
  file: string | undefined;
  private flushed = false;
  private ids = new Set<string>();
  private leafId: string | null = null;

  private constructor(
    public cwd: string,
    readonly dir: string,
    readonly persist: boolean,
  ) {
    if (persist && dir) mkdirSync(dir, { recursive: true });
  }

  get header(): Json {
    return this.entries[0] ?? {};
  }
  get id(): string {
    return String(this.header.id);
  }
  get hasMessages(): boolean {
    return this.entries.some((e) => e.type === "message");
  }
  get hasThinkingEntry(): boolean {
    return this.entries.some((e) => e.type === "thinking_level_change");
  }
  /** The last entry's id (what an RPC clone branches at). */
  get leaf(): string | null {
    return this.leafId;
  }

  /**
   * RPC `clone`: a new session in the same dir and the same cwd, its header naming this file as
   * parentSession, holding copies of this one's entries (same ids); written at once.
   */
  static cloneOf(source: SessionStore): SessionStore {
    const dir = source.file ? dirname(source.file) : source.dir;
    const store = new SessionStore(source.cwd, dir, source.persist);
    store.fresh(undefined, source.file ? resolve(source.file) : undefined);
    const copied = source.entries
      .slice(1)
      .filter((e) => e.type !== "session")
      .map((e) => structuredClone(e));
    store.entries = [store.header, ...copied];
    for (const e of copied) {
      if (typeof e.id !== "string") continue;
      store.ids.add(e.id);
      store.leafId = e.id;
    }
    if (store.persist && store.file) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(store.file, store.entries.map((e) => `${JSON.stringify(e)}\n`).join(""));
      store.flushed = true;
    }
    return store;
  }

  static create(cwd: string, dir: string, id?: string): SessionStore {
    const store = new SessionStore(cwd, dir, true);
    store.fresh(id);
    return store;
  }

  static inMemory(cwd: string, id?: string): SessionStore {
    const store = new SessionStore(cwd, "", false);
    store.fresh(id);
    return store;
  }

  /** `--session <path>`: an existing file is loaded (and pi runs in its header's cwd); a missing one becomes a new session there. */
  static open(path: string, dir: string | undefined, cwdOverride?: string): SessionStore {
    const file = resolve(path);
    const loaded = loadEntries(file);
    const headerCwd = loaded[0]?.cwd;
    const cwd = cwdOverride ?? (typeof headerCwd === "string" ? headerCwd : process.cwd());
    const store = new SessionStore(cwd, dir ?? dirname(file), true);
    store.setFile(file, loaded);
    return store;
  }

  private setFile(file: string, loaded: Json[]): void {
    this.file = file;
    if (existsSync(file)) {
      if (loaded.length === 0) {
        // Empty or corrupt: pi truncates it to a fresh header.
        this.fresh();
        this.file = file;
        writeFileSync(file, `${this.entries.map((e) => JSON.stringify(e)).join("\n")}\n`);
        this.flushed = true;
        return;
      }
      this.entries = loaded;
      for (const e of loaded.slice(1)) {
        if (typeof e.id === "string") {
          this.ids.add(e.id);
          this.leafId = e.id;
        }
      }
      this.flushed = true;
    } else {
      this.fresh();
      this.file = file;
    }
  }

  private fresh(id?: string, parentSession?: string): void {
    const timestamp = new Date().toISOString();
    const header: Json = { type: "session", version: 3, id: id ?? Bun.randomUUIDv7(), timestamp, cwd: this.cwd };
    if (parentSession) header.parentSession = parentSession;
    this.entries = [header];
    this.ids.clear();
    this.leafId = null;
    this.flushed = false;
    if (this.persist) this.file = join(this.dir, `${fileStamp(timestamp)}_${String(header.id)}.jsonl`);
  }

  /** pi's forkFrom: a new session in `cwd` holding a copy of the source's entries, written at once. */
  static fork(sourcePath: string, cwd: string, dir: string | undefined): SessionStore {
    const source = loadEntries(sourcePath);
    if (source.length === 0) throw new PiFailure(`Error: Cannot fork: source session file is empty or invalid: ${sourcePath}`);
    const targetDir = dir ?? defaultSessionDir(cwd);
    mkdirSync(targetDir, { recursive: true });
    const id = Bun.randomUUIDv7();
    const timestamp = new Date().toISOString();
    const file = join(targetDir, `${fileStamp(timestamp)}_${id}.jsonl`);
    const header = { type: "session", version: 3, id, timestamp, cwd, parentSession: resolve(sourcePath) };
    appendFileSync(file, `${JSON.stringify(header)}\n`);
    for (const entry of source.slice(1)) appendFileSync(file, `${JSON.stringify(entry)}\n`);
    return SessionStore.open(file, targetDir, cwd);
  }

  private newId(): string {
    for (;;) {
      const id = crypto.randomUUID().slice(0, 8);
      if (!this.ids.has(id)) return id;
    }
  }

  /** Append an entry (`type` plus fields); ids chain through parentId like pi's. */
  append(fields: Json): Json {
    const entry: Json = { type: fields.type, id: this.newId(), parentId: this.leafId, timestamp: new Date().toISOString() };
    for (const [k, v] of Object.entries(fields)) if (k !== "type") entry[k] = v;
    this.entries.push(entry);
    this.ids.add(String(entry.id));
    this.leafId = String(entry.id);
    this.persistEntry(entry);
    return entry;
  }

  /**
   * pi's _persist: nothing reaches the disk before the first assistant message;
   * then every entry held in memory is appended (the header too, even when the
   * file already starts with it), then each new entry as it comes.
   */
  private persistEntry(entry: Json): void {
    if (!this.persist || !this.file) return;
    const hasAssistant = this.entries.some((e) => e.type === "message" && (e.message as Json | undefined)?.role === "assistant");
    if (!hasAssistant) {
      this.flushed = false;
      return;
    }
    if (!this.flushed) {
      mkdirSync(dirname(this.file), { recursive: true });
      appendFileSync(this.file, this.entries.map((e) => `${JSON.stringify(e)}\n`).join(""));
      this.flushed = true;
    } else {
      appendFileSync(this.file, `${JSON.stringify(entry)}\n`);
    }
  }
}
