import { describe, expect, test } from "vitest";
import { ConnectError } from "./connect.js";
import { endOf, inputOf, selectorOf, signalOf, startRequestOf, updateSizeOf } from "./process-messages.js";

const refused = (parse: () => unknown, message: RegExp) => {
  let caught: unknown;
  try {
    parse();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ConnectError);
  expect(caught).toMatchObject({ code: "invalid_argument", message: expect.stringMatching(message) });
};

describe("process.Process messages in protobuf's JSON mapping", () => {
  test("a Start request as the SDK sends it, and its defaults", () => {
    expect(
      startRequestOf({
        process: { cmd: "/bin/bash", args: ["-l", "-c", "echo hi"], envs: { A: "1" }, cwd: "/tmp" },
        stdin: false,
        unknownField: "ignored, as connect-go ignores it",
      }),
    ).toEqual({
      process: { cmd: "/bin/bash", args: ["-l", "-c", "echo hi"], envs: { A: "1" }, cwd: "/tmp" },
      stdin: false,
    });
    // stdin absent means true (the proto's comment); null is absent; no pty without one asked.
    expect(startRequestOf({ process: { cmd: "ls", args: null, envs: null }, tag: "t" })).toEqual({
      process: { cmd: "ls", args: [], envs: {} },
      tag: "t",
      stdin: true,
    });
    expect(
      startRequestOf({ process: { cmd: "/bin/bash" }, pty: { size: { cols: 100, rows: "30" } } }).pty,
    ).toEqual({ cols: 100, rows: 30 });
    expect(startRequestOf({ process: { cmd: "/bin/bash" }, pty: {} }).pty).toEqual({ cols: 80, rows: 24 });
  });

  test("malformed Start requests are refused with what is wrong", () => {
    refused(() => startRequestOf({}), /process is required/);
    refused(() => startRequestOf({ process: "ls" }), /process must be a message/);
    refused(() => startRequestOf({ process: { args: [] } }), /process.cmd is required/);
    refused(() => startRequestOf({ process: { cmd: "ls", args: "-l" } }), /process.args/);
    refused(() => startRequestOf({ process: { cmd: "ls", args: [1] } }), /process.args/);
    refused(() => startRequestOf({ process: { cmd: "ls", envs: { A: 1 } } }), /process.envs/);
    refused(() => startRequestOf({ process: { cmd: "ls", envs: { "A=B": "1" } } }), /process.envs/);
    refused(() => startRequestOf({ process: { cmd: "l\0s" } }), /NUL/);
    refused(() => startRequestOf({ process: { cmd: "ls" }, stdin: "yes" }), /stdin must be a boolean/);
    refused(
      () => startRequestOf({ process: { cmd: "ls" }, pty: { size: { cols: 0, rows: 24 } } }),
      /pty.size/,
    );
    refused(
      () => startRequestOf({ process: { cmd: "ls" }, pty: { size: { cols: 80, rows: 1e6 } } }),
      /pty.size/,
    );
    refused(
      () => startRequestOf({ process: { cmd: "ls" }, pty: { size: { cols: -1, rows: 24 } } }),
      /unsigned/,
    );
  });

  test("selectors by pid (number or decimal string) or tag", () => {
    expect(selectorOf({ process: { pid: 42 } })).toEqual({ pid: 42 });
    expect(selectorOf({ process: { pid: "42" } })).toEqual({ pid: 42 });
    expect(selectorOf({ process: { tag: "web" } })).toEqual({ tag: "web" });
    refused(() => selectorOf({}), /select a process/);
    refused(() => selectorOf({ process: { pid: 1.5 } }), /unsigned 32-bit/);
    refused(() => selectorOf({ process: { pid: 1, tag: "x" } }), /not both/);
  });

  test("input bytes in base64, standard or URL-safe", () => {
    expect(inputOf({ input: { stdin: Buffer.from("hi\n").toString("base64") } })).toEqual({
      stdin: Buffer.from("hi\n"),
    });
    expect(inputOf({ input: { pty: "_-8" } })).toEqual({ pty: Buffer.from([0xff, 0xef]) });
    refused(() => inputOf({ input: { stdin: "not base64!" } }), /base64/);
    refused(() => inputOf({ input: {} }), /stdin or pty/);
    refused(() => inputOf({}), /stdin or pty/);
  });

  test("signals by enum name or number; Update's size", () => {
    expect(signalOf({ signal: "SIGNAL_SIGKILL" })).toBe("SIGKILL");
    expect(signalOf({ signal: 9 })).toBe("SIGKILL");
    expect(signalOf({ signal: "SIGNAL_SIGTERM" })).toBe("SIGTERM");
    refused(() => signalOf({ signal: "SIGNAL_UNSPECIFIED" }), /SIGNAL_SIGKILL or SIGNAL_SIGTERM/);
    refused(() => signalOf({}), /SIGNAL_SIGKILL or SIGNAL_SIGTERM/);
    expect(updateSizeOf({ pty: { size: { cols: 120, rows: 40 } } })).toEqual({ cols: 120, rows: 40 });
    expect(updateSizeOf({})).toBeUndefined();
    refused(() => updateSizeOf({ pty: {} }), /pty.size is required/);
  });

  test("ends worded as envd words Go's process state", () => {
    expect(endOf(0, null)).toEqual({ exitCode: 0, exited: true, status: "exit status 0" });
    expect(endOf(3, null)).toEqual({
      exitCode: 3,
      exited: true,
      status: "exit status 3",
      error: "exit status 3",
    });
    expect(endOf(null, "SIGKILL")).toEqual({
      exitCode: -1,
      exited: false,
      status: "signal: killed",
      error: "signal: killed",
    });
    expect(endOf(null, "SIGTERM").status).toBe("signal: terminated");
  });
});
