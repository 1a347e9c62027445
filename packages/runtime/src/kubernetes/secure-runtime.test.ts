import { describe, expect, test } from "vitest";
import { RuntimeStartError } from "../runtime.js";
import { resolveKubernetesSecureRuntime } from "./secure-runtime.js";

const config = { type: "auto", docker_runtime: "", netstack_runtime: "", k8s_runtime_class: "" } as const;
const having =
  (...names: string[]) =>
  async (name: string) =>
    names.includes(name);

describe("resolveKubernetesSecureRuntime", () => {
  test("auto picks gVisor when its RuntimeClass exists, else none", async () => {
    expect(await resolveKubernetesSecureRuntime(config, having("gvisor"))).toEqual({
      type: "gvisor",
      engineName: "gvisor",
      supportsNetworkPolicy: false,
    });
    expect(await resolveKubernetesSecureRuntime(config, having())).toEqual({
      type: "",
      engineName: "",
      supportsNetworkPolicy: true,
    });
  });

  test("usual names per type, or the configured RuntimeClass", async () => {
    expect(
      (await resolveKubernetesSecureRuntime({ ...config, type: "kata" }, having("kata"))).engineName,
    ).toBe("kata");
    const firecracker = await resolveKubernetesSecureRuntime(
      { ...config, type: "firecracker" },
      having("kata-fc"),
    );
    expect(firecracker).toEqual({ type: "firecracker", engineName: "kata-fc", supportsNetworkPolicy: true });
    const custom = { ...config, type: "gvisor", k8s_runtime_class: "sandboxed" } as const;
    expect((await resolveKubernetesSecureRuntime(custom, having("sandboxed"))).engineName).toBe("sandboxed");
  });

  test("a missing RuntimeClass is refused with what to create", async () => {
    const refused = resolveKubernetesSecureRuntime({ ...config, type: "firecracker" }, having("gvisor"));
    await expect(refused).rejects.toBeInstanceOf(RuntimeStartError);
    await expect(refused).rejects.toThrow(/RuntimeClass "kata-fc".*handler: kata-fc/);
  });
});
