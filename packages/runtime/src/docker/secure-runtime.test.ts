import { describe, expect, test } from "vitest";
import { resolveDockerSecureRuntime, resolveNetstackRuntime } from "./secure-runtime.js";

const engine = ["io.containerd.runc.v2", "runc", "runsc"];
/** How `make setup` registers runsc (README). */
const hostNetwork = ["--network=host", "--platform=ptrace", "--overlay2=none"];
const config = (type: "auto" | "" | "gvisor" | "kata" | "firecracker", docker_runtime = "") => ({
  type,
  docker_runtime,
  netstack_runtime: "",
  k8s_runtime_class: "",
});

describe("secure runtime selection in Docker mode", () => {
  test("defaults to gVisor when the engine has runsc, and to runc when it does not", () => {
    expect(resolveDockerSecureRuntime(config("auto"), engine, { runsc: hostNetwork })).toEqual({
      type: "gvisor",
      engineName: "runsc",
      supportsNetworkPolicy: true,
    });
    expect(resolveDockerSecureRuntime(config("auto"), ["runc"]).type).toBe("");
  });

  test("refuses a secure runtime the engine lacks, saying what is missing and how to fix it", () => {
    expect(() => resolveDockerSecureRuntime(config("gvisor"), ["runc"])).toThrowError(
      /needs the Docker runtime "runsc", but the engine offers: runc\. Install gVisor \(`make setup` installs runsc 0\.0~20240729/,
    );
    expect(() => resolveDockerSecureRuntime(config("gvisor", "gvisor-custom"), engine)).toThrowError(
      /"gvisor-custom"/,
    );
    expect(() => resolveDockerSecureRuntime(config("kata"), engine)).toThrowError(/"kata-runtime"/);
  });

  test("refuses firecracker in Docker mode", () => {
    expect(() => resolveDockerSecureRuntime(config("firecracker"), engine)).toThrowError(
      /only with runtime.type = "kubernetes"/,
    );
  });

  test("the standard runtime allows network policies, gVisor only with host-kernel sockets, Kata not", () => {
    expect(resolveDockerSecureRuntime(config(""), engine).supportsNetworkPolicy).toBe(true);
    expect(
      resolveDockerSecureRuntime(config("kata"), [...engine, "kata-runtime"]).supportsNetworkPolicy,
    ).toBe(false);
    const gvisor = (runtimeArgs: string[], type: "gvisor" | "auto" = "gvisor") =>
      resolveDockerSecureRuntime(config(type), engine, { runsc: runtimeArgs }).supportsNetworkPolicy;
    expect(gvisor(hostNetwork)).toBe(true);
    expect(gvisor(hostNetwork, "auto")).toBe(true);
    expect(gvisor(["--network", "host"])).toBe(true);
    expect(gvisor(["-network=host"])).toBe(true);
    // gVisor's own netstack (the default, or named), or no network at all.
    expect(gvisor([])).toBe(false);
    expect(gvisor(["--network=sandbox", "--platform=ptrace"])).toBe(false);
    expect(gvisor(["--network=none"])).toBe(false);
    expect(gvisor(["--network=hostile"])).toBe(false);
    expect(resolveDockerSecureRuntime(config("gvisor"), engine).supportsNetworkPolicy).toBe(false);
  });
});

describe("the netstack runtime (checkpoints, decision 0194)", () => {
  const gvisor = { type: "gvisor", engineName: "runsc", supportsNetworkPolicy: true } as const;
  const args = {
    runsc: hostNetwork,
    "runsc-netstack": ["--network=sandbox", "--net-disconnect-ok", "--platform=ptrace", "--overlay2=none"],
  };
  const host = { nameserver: "10.0.0.53", networkFiles: true };

  test("is off unless configured", () => {
    expect(resolveNetstackRuntime("", gvisor, args, host)).toBeUndefined();
  });

  test("a registered runsc on its own network stack serves, with the host's resolver", () => {
    expect(resolveNetstackRuntime("runsc-netstack", gvisor, args, host)).toEqual({
      engineName: "runsc-netstack",
      nameserver: "10.0.0.53",
    });
  });

  test("refuses what cannot serve, saying what to change", () => {
    expect(() => resolveNetstackRuntime("runsc-nope", gvisor, args, host)).toThrow(/no runtime of that name/);
    expect(() => resolveNetstackRuntime("runsc", gvisor, args, host)).toThrow(/--network=host/);
    expect(() =>
      resolveNetstackRuntime(
        "runsc-netstack",
        { type: "", engineName: "", supportsNetworkPolicy: true },
        args,
        host,
      ),
    ).toThrow(/for gVisor/);
    expect(() =>
      resolveNetstackRuntime("runsc-netstack", gvisor, args, { nameserver: undefined, networkFiles: true }),
    ).toThrow(/egress.upstream_dns/);
  });
});
