import { PaddockError } from "@paddock/common/errors";
import { describe, expect, test } from "vitest";
import { parseSessionSpec } from "./spec.js";

const failure = (body: Record<string, unknown>) => {
  try {
    parseSessionSpec(body);
  } catch (error) {
    if (error instanceof PaddockError) return `${error.status} ${error.code}`;
    throw error;
  }
  return "accepted";
};

describe("an isolated session's create request", () => {
  test("defaults: overlay, balanced sharing of the network, root", () => {
    expect(parseSessionSpec({ workspace: { path: "/workspace/" } })).toEqual({
      workspace: { path: "/workspace", mode: "overlay" },
      binds: [],
      share_net: true,
      uid: 0,
      gid: 0,
      uid_mode: "userns",
    });
    expect(
      parseSessionSpec({
        workspace: { path: "/srv/app", mode: "ro" },
        profile: "strict",
        env_passthrough: { mode: "allow", keys: ["PATH"] },
        uid: 0,
        uid_mode: "setpriv",
        idle_timeout_seconds: 30,
      }),
    ).toMatchObject({
      profile: "strict",
      env_passthrough: { mode: "allow", keys: ["PATH"] },
      idle_timeout_seconds: 30,
    });
  });

  test("binds default their destination to the source; extra_writable paths are read-write binds", () => {
    expect(
      parseSessionSpec({
        workspace: { path: "/w" },
        binds: [{ source: "/srv/data/", dest: "/mnt/data", readonly: true }, { source: "/srv/out" }],
        extra_writable: ["/var/cache"],
      }).binds,
    ).toEqual([
      { source: "/srv/data", dest: "/mnt/data", readonly: true },
      { source: "/srv/out", dest: "/srv/out", readonly: false },
      { source: "/var/cache", dest: "/var/cache", readonly: false },
    ]);
  });

  test("wrong shapes are 400, options the mechanism cannot honour are 501 (runtime limits are checked at create)", () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, "400 invalid_request"],
      [{ workspace: "/workspace" }, "400 invalid_request"],
      [{ workspace: { path: "workspace" } }, "400 invalid_request"],
      [{ workspace: { path: "/" } }, "400 invalid_request"],
      [{ workspace: { path: "/a/../etc" } }, "400 invalid_request"],
      [{ workspace: { path: "/a:b" } }, "400 invalid_request"],
      [{ workspace: { path: "/proc/1" } }, "400 invalid_request"],
      [{ workspace: { path: "/opt/paddock" } }, "400 invalid_request"],
      [{ workspace: { path: "/w", mode: "copy" } }, "400 invalid_request"],
      [{ workspace: { path: "/w" }, profile: "paranoid" }, "400 invalid_request"],
      [{ workspace: { path: "/w" }, uid: -1 }, "400 invalid_request"],
      [{ workspace: { path: "/w" }, uid_mode: "sudo" }, "400 invalid_request"],
      [{ workspace: { path: "/w" }, env_passthrough: { mode: "maybe" } }, "400 invalid_request"],
      [{ workspace: { path: "/w" }, env_passthrough: { keys: [1] } }, "400 invalid_request"],
      [{ workspace: { path: "/w" }, idle_timeout_seconds: 1.5 }, "400 invalid_request"],
      [{ workspace: { path: "/w" }, share_net: "no" }, "400 invalid_request"],
      [{ workspace: { path: "/w" }, binds: "/tmp" }, "400 invalid_request"],
      [{ workspace: { path: "/w" }, binds: [{ source: "tmp" }] }, "400 invalid_request"],
      [{ workspace: { path: "/w" }, binds: [{ source: "/tmp", dest: "/sys/x" }] }, "400 invalid_request"],
      [{ workspace: { path: "/w" }, binds: [{ source: "/a,b" }] }, "400 invalid_request"],
      [{ workspace: { path: "/w" }, binds: [{ source: "/tmp", readonly: 1 }] }, "400 invalid_request"],
      [{ workspace: { path: "/w" }, binds: ["/tmp"] }, "400 invalid_request"],
      [{ workspace: { path: "/w" }, extra_writable: "/tmp" }, "400 invalid_request"],
      [{ workspace: { path: "/w" }, extra_writable: ["/"] }, "400 invalid_request"],
      [{ workspace: { path: "/w" }, share_net: false }, "accepted"],
      [{ workspace: { path: "/w" }, uid: 1000 }, "501 not_supported"],
      [{ workspace: { path: "/w" }, gid: 1000 }, "501 not_supported"],
      [{ workspace: { path: "/w" }, binds: [], extra_writable: [], share_net: true }, "accepted"],
    ];
    for (const [body, expected] of cases) expect(failure(body), JSON.stringify(body)).toBe(expected);
  });
});
