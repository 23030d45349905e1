// The copy of an exported opencode session an arm imports into its own
// workspace (src/core/opencode/session-copy.ts), on a real export of
// opencode 1.18.33's shape. Pure.
import { describe, expect, test } from "bun:test";
import { copySession } from "../src/core/opencode/session-copy.ts";

const PRIME = "ses_dced170cfffedI7kyPUqMhpb2R";
const USER = "msg_2312e8fcc0015AMQRDthRkOZX5";
const REPLY = "msg_2312e9a99001fKu9Srz2BNLf05";
const exported = JSON.stringify({
  info: {
    id: PRIME,
    slug: "brave-forest",
    projectID: "cce4a72cc4ad3878f130d9e36dafa905c4ee63e3",
    directory: "/runs/b/workspaces/arm-1",
    title: "A title",
    time: { created: 1, updated: 2 },
  },
  messages: [
    {
      info: { role: "user", id: USER, sessionID: PRIME },
      parts: [{ id: "prt_2312e8fcd001aaaaaaaaaaaaaa", messageID: USER, sessionID: PRIME, type: "text", text: `Read ${PRIME}?` }],
    },
    {
      info: { role: "assistant", id: REPLY, parentID: USER, sessionID: PRIME },
      parts: [{ id: "prt_2312ea769001uc82Tekg885p73", messageID: REPLY, sessionID: PRIME, type: "text", text: "Read." }],
    },
  ],
});

describe("copySession", () => {
  test("every session, message and part id is new, the same id the same new one; the folder is the arm's; the rest as exported", () => {
    let n = 0;
    const copied = copySession(exported, "/runs/b/workspaces/arm-2", () => `Copy${String(n++).padStart(10, "0")}`);
    if (!copied.ok) throw new Error(copied.error);
    const doc = JSON.parse(copied.json);
    expect(copied.id).toBe(doc.info.id);
    expect(doc.info.id).toBe("ses_dced170cfffeCopy0000000000");
    expect(doc.info.directory).toBe("/runs/b/workspaces/arm-2");
    expect(doc.info.projectID).toBe("cce4a72cc4ad3878f130d9e36dafa905c4ee63e3");
    // The old id is left only where the model's text mentions it.
    expect(copied.json.split(PRIME).length).toBe(2);
    const [user, reply] = doc.messages;
    expect(user.info.id).not.toBe(USER);
    expect(user.info.id.slice(0, 16)).toBe(USER.slice(0, 16));
    expect(user.info.sessionID).toBe(doc.info.id);
    expect(reply.info.parentID).toBe(user.info.id);
    expect(user.parts[0].messageID).toBe(user.info.id);
    expect(reply.parts[0].id).not.toBe("prt_2312ea769001uc82Tekg885p73");
    // Ids are replaced as whole JSON strings only: text that mentions one is the model's and stays.
    expect(user.parts[0].text).toBe(`Read ${PRIME}?`);
  });

  test("two copies of one export share no id", () => {
    const a = copySession(exported, "/a");
    const b = copySession(exported, "/b");
    if (!a.ok || !b.ok) throw new Error("not copied");
    expect(a.id).not.toBe(b.id);
    expect(a.id).toMatch(/^ses_dced170cfffe[0-9A-Za-z]{14}$/);
  });

  test("what is not an export is refused, one line", () => {
    expect(copySession("not json", "/a")).toMatchObject({ ok: false, error: expect.stringContaining("not JSON") });
    expect(copySession(JSON.stringify({ info: { id: "x" } }), "/a")).toMatchObject({
      ok: false,
      error: expect.stringContaining("not an opencode session"),
    });
  });
});
