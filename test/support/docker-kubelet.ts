import type { FakeKubeApi, KubeObject } from "@paddock/runtime/testing";
import { testDocker } from "@paddock/runtime/testing";

/** The Docker runtime each RuntimeClass handler names on this machine. */
const engineRuntimes: Record<string, string> = { runsc: "runsc" };

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  securityContext?: {
    capabilities?: { drop?: string[]; add?: string[] };
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
  };
}

/**
 * Plays the kubelet for a stand-in API server on this machine's Docker engine: a pod created
 * through the API is run as the cluster would run it — its emptyDir volumes, its init containers
 * to completion, then its containers with their commands, environment (Secret references
 * resolved), mounts, capabilities and the RuntimeClass's handler — and reported Running at its
 * container's address. A deleted pod's containers and volumes go with it.
 */
export class DockerKubelet {
  private readonly started = new Map<string, Promise<void>>();

  constructor(
    private readonly api: FakeKubeApi,
    private readonly label: string,
  ) {
    api.onPodCreated = (pod) => {
      const name = pod.metadata.name as string;
      this.started.set(
        name,
        this.run(pod).catch((error: unknown) =>
          api.setPodStatus(name, { phase: "Failed", message: String((error as Error).message) }),
        ),
      );
    };
    api.onPodDeleted = (pod) => {
      const name = pod.metadata.name as string;
      void (this.started.get(name) ?? Promise.resolve()).then(() => this.remove(pod.metadata.uid as string));
      this.started.delete(name);
    };
  }

  /** Removes everything this kubelet started. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.started.values()]);
    const filters = { label: [`${this.label}`] };
    for (const container of await testDocker.listContainers({ all: true, filters }))
      await testDocker.getContainer(container.Id).remove({ force: true, v: true });
    for (const volume of (await testDocker.listVolumes({ filters })).Volumes ?? [])
      await testDocker.getVolume(volume.Name).remove({ force: true });
  }

  private async run(pod: KubeObject): Promise<void> {
    const uid = pod.metadata.uid as string;
    const labels = { [this.label]: "", "kubelet.pod": uid };
    const volumes = new Map<string, string>();
    for (const volume of pod.spec.volumes ?? []) {
      if (!volume.emptyDir) throw new Error(`volume ${volume.name}: only emptyDir is played here`);
      const name = `kubelet-${uid}-${volume.name}`;
      await testDocker.createVolume({ Name: name, Labels: labels });
      volumes.set(volume.name, name);
    }
    const runtime = pod.spec.runtimeClassName
      ? engineRuntimes[this.api.get("runtimeclasses", pod.spec.runtimeClassName, "")?.handler as string]
      : undefined;
    const create = (container: Container, suffix: string) =>
      testDocker.createContainer({
        name: `kubelet-${uid}-${suffix}`,
        Image: container.image,
        Entrypoint: container.command ?? [],
        Cmd: container.args ?? [],
        Env: (container.env ?? []).map((variable) => `${variable.name}=${this.valueOf(pod, variable)}`),
        Hostname: pod.spec.hostname,
        Labels: labels,
        HostConfig: {
          Binds: (container.volumeMounts ?? []).map(
            (mount) => `${volumes.get(mount.name)}:${mount.mountPath}${mount.readOnly ? ":ro" : ""}`,
          ),
          CapDrop: container.securityContext?.capabilities?.drop ?? [],
          CapAdd: container.securityContext?.capabilities?.add ?? [],
          SecurityOpt:
            container.securityContext?.allowPrivilegeEscalation === false ? ["no-new-privileges"] : [],
          ReadonlyRootfs: container.securityContext?.readOnlyRootFilesystem ?? false,
          ...(runtime ? { Runtime: runtime } : {}),
        },
      });
    for (const [index, init] of (pod.spec.initContainers ?? []).entries()) {
      const container = await create(init, `init-${index}`);
      await container.start();
      const { StatusCode } = (await container.wait()) as { StatusCode: number };
      if (StatusCode !== 0) throw new Error(`init container ${init.name} exited with ${StatusCode}`);
    }
    let address = "";
    for (const [index, spec] of (pod.spec.containers as Container[]).entries()) {
      const container = await create(spec, `${index}`);
      await container.start();
      address ||= (await container.inspect()).NetworkSettings.Networks.bridge?.IPAddress ?? "";
    }
    this.api.runPod(pod.metadata.name, address);
  }

  private valueOf(pod: KubeObject, variable: NonNullable<Container["env"]>[number]): string {
    const reference = variable.valueFrom?.secretKeyRef;
    if (!reference) return variable.value ?? "";
    const secret = this.api.get("secrets", reference.name, pod.metadata.namespace);
    const encoded = secret?.data?.[reference.key];
    if (typeof encoded !== "string") throw new Error(`secret ${reference.name} has no key ${reference.key}`);
    return Buffer.from(encoded, "base64").toString();
  }

  private async remove(uid: string): Promise<void> {
    const filters = { label: [`kubelet.pod=${uid}`] };
    for (const container of await testDocker.listContainers({ all: true, filters }))
      await testDocker.getContainer(container.Id).remove({ force: true });
    for (const volume of (await testDocker.listVolumes({ filters })).Volumes ?? [])
      await testDocker.getVolume(volume.Name).remove({ force: true });
  }
}
