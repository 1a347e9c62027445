import { describe, expect, test } from "vitest";
import { imageReferenceProblem } from "./image-reference.js";

const digest = `sha256:${"a".repeat(64)}`;

describe("image references follow Docker's grammar", () => {
  test.each([
    "debian",
    "debian:12",
    "paddock/base:bookworm",
    "library/ubuntu:24.04",
    "registry.example.com/team/app",
    "registry.example.com:5000/team/app:1.0",
    "localhost:5000/app",
    "Registry.Example.COM/app",
    "[::1]:5000/app:v1",
    "10.0.0.1:5000/app",
    "my_app__x.y-z---w",
    `app@${digest}`,
    `app:1.0@${digest}`,
    `a/${"b".repeat(250)}`,
  ])("%s is accepted", (reference) => {
    expect(imageReferenceProblem(reference)).toBeUndefined();
  });

  test.each([
    "",
    "../../etc/passwd",
    "a/../b",
    "/etc/passwd",
    "app/",
    "app//x",
    "UPPER",
    "team/App",
    "app:",
    ":tag",
    "app:-tag",
    `app:${"t".repeat(129)}`,
    "app@sha256:abc",
    "app@sha256",
    "app?x=1",
    "app#x",
    "app name",
    "app\u0000",
    "app_.x",
    "-app",
    "app-",
    "registry:port/app",
    `a/${"b".repeat(254)}`,
  ])("%j is refused", (reference) => {
    expect(imageReferenceProblem(reference)).toMatch(/^image /);
  });
});
