import { describe, expect, test } from "vitest";
import { readProbe } from "./capabilities.js";

describe("reading the isolation probe", () => {
  test("gVisor 2024: every step works but the read-only lock; the overlay takes no userxattr", () => {
    const support = readProbe(
      [
        "ok namespaces",
        "ok mount_namespace",
        "ok overlay",
        "ok binds",
        "ok binds",
        "ok network_namespace",
        "ok private_proc",
        "ok locked_mounts",
        "no locked_read_only remounted read-write",
      ].join("\n"),
      "",
    );
    const { locked_read_only, ...others } = support.features;
    expect(Object.values(others).every((feature) => feature.available)).toBe(true);
    expect(locked_read_only.available).toBe(false);
    expect(locked_read_only.reason).toMatch(/MNT_LOCK_READONLY.*the runtime said: remounted read-write$/);
    expect(support.overlayOptions).toBe("");
  });

  test("runc: the overlay needs userxattr; a fresh /proc is refused, with the kernel's reason and the runtime's words", () => {
    const support = readProbe(
      [
        "ok namespaces",
        "ok mount_namespace",
        "ok overlay userxattr,",
        "ok binds",
        "ok binds",
        "no network_namespace unshare: unshare failed: Operation not permitted",
        "no private_proc mount: /proc: permission denied.        dmesg(1) may have more information after failed mount system call. ",
        "ok locked_mounts",
        "ok locked_read_only",
      ].join("\n"),
      "",
    );
    expect(support.overlayOptions).toBe("userxattr,");
    expect(support.features.locked_read_only).toEqual({ available: true });
    expect(support.features.network_namespace.reason).toMatch(/seccomp.*Operation not permitted$/);
    expect(support.features.overlay).toEqual({ available: true });
    expect(support.features.private_proc.available).toBe(false);
    expect(support.features.private_proc.reason).toMatch(/fully visible/);
    expect(support.features.private_proc.reason).toMatch(
      /the runtime said: mount: \/proc: permission denied\.$/,
    );
  });

  test("gVisor 2022: mounts refused; later steps say they were not tried", () => {
    const support = readProbe("ok namespaces\nno mount_namespace mount: permission denied\n", "");
    expect(support.features.user_namespace.available).toBe(true);
    expect(support.features.mount_namespace).toEqual({
      available: false,
      reason: "the runtime said: mount: permission denied",
    });
    expect(support.features.overlay).toEqual({
      available: false,
      reason: "not tried: an earlier step failed",
    });
  });

  test("no namespaces at all: every feature carries unshare's error", () => {
    const support = readProbe("", "unshare: unshare(0x30020000): Operation not permitted\n");
    for (const feature of Object.values(support.features)) {
      expect(feature.available).toBe(false);
      expect(feature.reason).toMatch(/user namespace.*Operation not permitted/);
    }
  });
});
