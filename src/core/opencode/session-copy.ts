// A copy of an exported opencode session (`opencode export ID`) that
// `opencode import` takes as a new session in another folder: every session,
// message and part id replaced by a fresh one, the folder set. opencode 1.18.33
// keeps a fork in its source's folder and runs its tools there (`run -s ID
// --fork` from another folder hangs; `POST /session/{id}/fork?directory=`
// ignores the directory), so an arm in its own workspace starts from a copy.
// Pure.
import { lazySchema } from "../lazy-schema.ts";

const ExportedSession = lazySchema((z) =>
  z.looseObject({
    info: z.looseObject({ id: z.string().regex(/^ses_/), directory: z.string() }),
    messages: z.array(z.unknown()),
  }),
);

/** opencode's ids: a prefix, 12 hex digits of time and counter, 14 random characters (the time part keeps their order). */
const ID = /"((?:ses|msg|prt)_[0-9a-f]{12})([0-9A-Za-z]{14})"/g;
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

export type SessionCopy = { ok: true; id: string; json: string } | { ok: false; error: string };

export function randomSuffix(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(14)), (b) => ALPHABET[b % ALPHABET.length]).join("");
}

/** The export's text copied for `directory`, with fresh ids (the same id always becomes the same new one). */
export function copySession(exported: string, directory: string, suffix: () => string = randomSuffix): SessionCopy {
  let doc: unknown;
  try {
    doc = JSON.parse(exported);
  } catch (error) {
    return { ok: false, error: `the export is not JSON: ${(error as Error).message}` };
  }
  const parsed = ExportedSession.safeParse(doc);
  if (!parsed.success)
    return { ok: false, error: `the export is not an opencode session: ${parsed.error.issues[0]?.message ?? "invalid"}` };
  const fresh = new Map<string, string>();
  const renamed = JSON.stringify(parsed.data).replace(ID, (_, head: string, tail: string) => {
    const id = head + tail;
    if (!fresh.has(id)) fresh.set(id, head + suffix());
    return JSON.stringify(fresh.get(id));
  });
  const copy = ExportedSession.parse(JSON.parse(renamed));
  copy.info.directory = directory;
  return { ok: true, id: copy.info.id, json: JSON.stringify(copy) };
}
