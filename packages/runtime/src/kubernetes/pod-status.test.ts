import type { V1Pod } from "@kubernetes/client-node";
import { PaddockError } from "@paddock/common";
import { describe, expect, test } from "vitest";
import { containerdId, runningAddress, startProblem, unaskedExit, workloadStatus } from "./pod-status.js";

const images = { execd: "paddock/execd:0.1.0", egress: "paddock/egress:0.1.0" };

function pod(status: V1Pod["status"], metadata: V1Pod["metadata"] = {}): V1Pod {
  return { metadata: { name: "sbx-1", uid: "uid-1", ...metadata }, status };
}

const running = pod({
  phase: "Running",
  podIP: "10.0.0.5",
  containerStatuses: [
    {
      name: "sandbox",
      image: "python",
      imageID: "",
      ready: true,
      restartCount: 0,
      containerID: "containerd://abc",
      state: { running: {} },
    },
  ],
});

function sandboxState(state: NonNullable<V1Pod["status"]>["containerStatuses"]) {
  return pod({ phase: "Pending", containerStatuses: state });
}

describe("pod status", () => {
  test("a running pod serves at its IP", () => {
    expect(runningAddress(running)).toBe("10.0.0.5");
    expect(workloadStatus(running)).toMatchObject({
      state: "running",
      address: "10.0.0.5",
      containerId: "uid-1",
    });
    expect(containerdId(running)).toBe("abc");
    expect(runningAddress(pod({ phase: "Pending", podIP: "10.0.0.5" }))).toBeUndefined();
  });

  test("exits: OOM kills, ordinary exits, evictions; never a pod being deleted", () => {
    const oom = pod({
      phase: "Failed",
      containerStatuses: [
        {
          name: "sandbox",
          image: "",
          imageID: "",
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode: 137, reason: "OOMKilled" } },
        },
      ],
    });
    expect(unaskedExit(oom)).toEqual({ exitCode: 137, oomKilled: true });
    expect(workloadStatus(oom)).toMatchObject({ state: "exited", exitCode: 137, oomKilled: true });
    expect(unaskedExit(pod({ phase: "Failed", reason: "Evicted" }))).toEqual({ oomKilled: false });
    expect(unaskedExit(pod(oom.status, { deletionTimestamp: new Date() }))).toBeUndefined();
    expect(unaskedExit(running)).toBeUndefined();
  });

  test("start problems that will not heal", () => {
    const pull = (reason: string, message: string) =>
      startProblem(
        sandboxState([
          {
            name: "sandbox",
            image: "x:1",
            imageID: "",
            ready: false,
            restartCount: 0,
            state: { waiting: { reason, message } },
          },
        ]),
        images,
      );
    expect(pull("ImagePullBackOff", "not found")).toMatchObject({ code: "image_not_found" });
    expect(pull("ErrImagePull", "pull access denied")).toMatchObject({ code: "registry_auth_failed" });
    expect(pull("ContainerCreating", "")).toBeUndefined();
    const execd = startProblem(
      pod({
        phase: "Pending",
        initContainerStatuses: [
          {
            name: "execd",
            image: images.execd,
            imageID: "",
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: "ErrImagePull" } },
          },
        ],
      }),
      images,
    );
    expect(execd).not.toBeInstanceOf(PaddockError);
    expect(execd?.message).toMatch(/paddock\/execd:0\.1\.0.*runtime\.execd_image/);
    expect(startProblem(pod({ phase: "Failed" }), images)?.message).toMatch(/exited/);
    expect(startProblem(pod({ phase: "Pending" }), images)).toBeUndefined();
  });
});
