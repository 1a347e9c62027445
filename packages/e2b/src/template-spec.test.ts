import { isPaddockError } from "@paddock/common";
import { describe, expect, it } from "vitest";
import { buildSpecOf } from "./template-spec.js";
import { issueUploadToken, verifyUploadToken } from "./upload-token.js";

const hash = "a".repeat(64);
const ids = ["python", "node", "ubuntu", "e2b-base"];

function refusal(work: () => unknown): { code: string; message: string } {
  try {
    work();
  } catch (error) {
    if (isPaddockError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("E2B's serialized template as a build spec", () => {
  it("maps every step, one for one, with users, modes and forces", () => {
    const { spec, notes } = buildSpecOf(
      {
        fromTemplate: "python",
        force: true,
        startCmd: "python3 -m http.server",
        readyCmd: "true",
        steps: [
          { type: "RUN", args: ["apt-get update", "root"], force: false },
          { type: "RUN", args: ["echo hi"], force: true },
          { type: "COPY", args: ["app", "/app/", "user", "0755"], filesHash: hash, forceUpload: null },
          { type: "COPY", args: ["a.txt", "/a.txt", "", ""], filesHash: hash },
          { type: "ENV", args: ["A", "1", "B", "two words"] },
          { type: "WORKDIR", args: ["/app"] },
          { type: "USER", args: ["user"] },
        ],
      },
      ids,
    );
    expect(notes).toEqual([]);
    expect(spec).toEqual({
      from: "python",
      force: true,
      startCommand: "python3 -m http.server",
      readyCommand: "true",
      steps: [
        { type: "RUN", command: "apt-get update", user: "root" },
        { type: "RUN", command: "echo hi", force: true },
        { type: "COPY", files: hash, src: "app", dest: "/app/", user: "user", mode: 0o755 },
        { type: "COPY", files: hash, src: "a.txt", dest: "/a.txt" },
        { type: "ENV", values: { A: "1", B: "two words" } },
        { type: "WORKDIR", path: "/app" },
        { type: "USER", user: "user" },
      ],
    });
  });

  it("starts from Paddock's templates: E2B's bases, its aliases, Paddock's images, and noted look-alikes", () => {
    const from = (start: Parameters<typeof buildSpecOf>[0]) => buildSpecOf(start, ids);
    expect(from({}).spec.from).toBe("e2b-base");
    expect(from({ fromImage: "e2bdev/base:latest" }).spec.from).toBe("e2b-base");
    expect(from({ fromImage: "e2bdev/code-interpreter:v1" }).spec.from).toBe("e2b-code-interpreter");
    expect(from({ fromTemplate: "base" }).spec.from).toBe("e2b-base");
    expect(from({ fromTemplate: "my-own" }).spec.from).toBe("my-own");
    expect(from({ fromImage: "paddock/template-node:latest" }).spec.from).toBe("node");
    const python = from({ fromImage: "python:3.12-slim" });
    expect(python.spec.from).toBe("python");
    expect(python.notes).toEqual([expect.stringContaining("pulls no images: python:3.12-slim")]);
    expect(from({ fromImage: "debian:stable" }).spec.from).toBe("ubuntu");
  });

  it("refuses what it cannot build, naming it", () => {
    expect(refusal(() => buildSpecOf({ fromImage: "ghcr.io/acme/app:1" }, ids))).toEqual({
      code: "invalid_template_build",
      message: expect.stringMatching(/pulls no images.*python, node, ubuntu, e2b-base/),
    });
    expect(
      refusal(() => buildSpecOf({ fromImage: "python:3", fromImageRegistry: { type: "registry" } }, ids))
        .message,
    ).toMatch(/registry credentials/);
    const step = (type: string, args: string[], filesHash?: string) =>
      refusal(() => buildSpecOf({ steps: [{ type, args, ...(filesHash ? { filesHash } : {}) }] }, ids));
    expect(step("ARG", ["X"]).message).toMatch(/steps\[0\]: step type "ARG"/);
    expect(step("COPY", ["a", "/a"]).message).toMatch(/filesHash/);
    expect(step("COPY", ["a", "/a", "", "9"], hash).message).toMatch(/not an octal file mode/);
    expect(step("ENV", ["A"]).message).toMatch(/in pairs/);
  });
});

describe("upload tokens", () => {
  const grant = { accountId: "acct-one", templateId: "tpl-one", hash };
  const upload = { templateId: grant.templateId, hash };

  it("name their account while unexpired, for their template and hash only, under this server's key", () => {
    const token = issueUploadToken("key", grant);
    expect(verifyUploadToken("key", token, upload)).toBe("acct-one");
    expect(verifyUploadToken("other key", token, upload)).toBeUndefined();
    expect(verifyUploadToken("key", token, { ...upload, templateId: "tpl-two" })).toBeUndefined();
    expect(verifyUploadToken("key", token, { ...upload, hash: "b".repeat(64) })).toBeUndefined();
    expect(verifyUploadToken("key", token.replace("acct-one", "acct-two"), upload)).toBeUndefined();
    expect(verifyUploadToken("key", token, upload, Date.now() + 3600_000)).toBeUndefined();
    expect(verifyUploadToken("key", "", upload)).toBeUndefined();
  });
});
