import { EXECD_PORT } from "@paddock/common";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type ControlPlaneUnderTest, startControlPlane } from "./harness.js";

// The control plane keeps connections to execds open between calls. Docker gives a deleted
// sandbox's address to the next sandbox created, which must get a connection of its own.
describe("kept-alive connections to execd", () => {
  let cp: ControlPlaneUnderTest;
  let owner: string;

  beforeAll(async () => {
    cp = await startControlPlane();
    owner = await cp.account("connections@example.com");
  });
  afterAll(async () => {
    await cp?.dispose();
  });

  const create = async () => {
    const created = await cp.call("POST", "/sandboxes", owner, { template: "ubuntu" });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const run = (id: string, command: string) => cp.call("POST", `/sandboxes/${id}/run`, owner, { command });

  test("a sandbox on a deleted sandbox's address answers its first command", async () => {
    const first = await create();
    const firstAddress = (await cp.stack.sandboxes.target(first, EXECD_PORT)).host;
    expect((await run(first, "echo first")).body).toMatchObject({ stdout: "first\n", exitCode: 0 });
    expect((await cp.call("DELETE", `/sandboxes/${first}`, owner)).status).toBe(204);
    await expect.poll(async () => (await cp.call("GET", `/sandboxes/${first}`, owner)).status).toBe(404);

    const second = await create();
    const secondAddress = (await cp.stack.sandboxes.target(second, EXECD_PORT)).host;
    // Docker reuses the lowest free address; if it did not here, the test still runs the command.
    if (secondAddress !== firstAddress)
      console.warn(`address not reused (${firstAddress} → ${secondAddress})`);
    const answer = await run(second, "echo second");
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ stdout: "second\n", exitCode: 0 });
  });

  test("many commands in a row, and in parallel, share few connections and all answer", async () => {
    const id = await create();
    for (let i = 0; i < 20; i++) expect((await run(id, `echo ${i}`)).body.stdout).toBe(`${i}\n`);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => run(id, `echo p${i}`)));
    expect(answers.map((answer) => answer.body.stdout)).toEqual(
      Array.from({ length: 10 }, (_, i) => `p${i}\n`),
    );
  });
});
