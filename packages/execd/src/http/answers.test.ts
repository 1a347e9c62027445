import { describe, expect, test } from "vitest";
import { answerFor } from "./answers.js";

const errno = (code: string) => Object.assign(new Error(`${code}: refused`), { code });

describe("execd's answers to thrown errors", () => {
  test.each([
    ["ENOENT", 404, "not_found"],
    ["ENOTDIR", 400, "not_a_directory"],
    ["EISDIR", 400, "is_a_directory"],
    ["EEXIST", 409, "already_exists"],
    ["EACCES", 403, "permission_denied"],
    ["EPERM", 403, "permission_denied"],
    ["ENOTEMPTY", 409, "directory_not_empty"],
    ["EINVAL", 400, "invalid_request"],
    ["ENAMETOOLONG", 400, "invalid_request"],
    ["ELOOP", 400, "invalid_request"],
  ])("%s is %i %s with the system's message", (code, status, answer) => {
    const error = answerFor(errno(code));
    expect([error.status, error.code, error.message]).toEqual([status, answer, `${code}: refused`]);
  });

  test("a NUL in a path or argument is the caller's mistake", () => {
    const error = answerFor(
      Object.assign(new TypeError("path must be a string without null bytes"), {
        code: "ERR_INVALID_ARG_VALUE",
      }),
    );
    expect([error.status, error.code, error.message]).toEqual([
      400,
      "invalid_request",
      "paths and commands cannot contain a NUL byte",
    ]);
  });

  test("anything else is a 500 that tells nothing of the inside", () => {
    const error = answerFor(new Error("secret detail"));
    expect([error.status, error.code, error.message]).toEqual([
      500,
      "internal_error",
      "execd failed to handle the request",
    ]);
  });
});
