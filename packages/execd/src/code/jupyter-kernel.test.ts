import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { freePorts, interruptModeFromSpec } from "./jupyter-kernel.js";

describe("kernelspec interrupt mode", () => {
  const directory = mkdtempSync(join(tmpdir(), "kernelspec-"));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));
  const spec = (name: string, content: string) => {
    const path = join(directory, name);
    writeFileSync(path, content);
    return path;
  };

  test("the first readable spec decides; signal unless it says message", () => {
    const message = spec("message.json", JSON.stringify({ argv: [], interrupt_mode: "message" }));
    const signal = spec("signal.json", JSON.stringify({ argv: [], interrupt_mode: "signal" }));
    const unsaid = spec("unsaid.json", JSON.stringify({ argv: [] }));
    const broken = spec("broken.json", "{ not json");
    expect(interruptModeFromSpec([join(directory, "missing.json"), broken, message, signal])).toBe("message");
    expect(interruptModeFromSpec([signal, message])).toBe("signal");
    expect(interruptModeFromSpec([unsaid, message])).toBe("signal");
    expect(interruptModeFromSpec([])).toBe("signal");
  });
});

test("free ports are distinct and bindable on 127.0.0.1", async () => {
  const ports = await freePorts(5);
  expect(new Set(ports).size).toBe(5);
  for (const port of ports) {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  }
});
