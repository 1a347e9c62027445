import { Alert, Badge, Box, Button, Group, Text } from "@mantine/core";
import { FitAddon } from "@xterm/addon-fit";
import { Terminal as XTerm } from "@xterm/xterm";
import { useEffect, useRef, useState } from "react";

type Status =
  | { kind: "connecting" }
  | { kind: "open" }
  | { kind: "exited"; exitCode: number }
  | { kind: "failed"; detail: string }
  | { kind: "closed" };

/**
 * A real shell in the sandbox: GET /sandboxes/{id}/terminal as a WebSocket (the session cookie
 * authenticates it). Binary frames carry bytes both ways; text frames carry resizes out and the
 * exit or error in. What the terminal showed stays on screen after it ends.
 */
export function Terminal({ sandboxId, running }: { sandboxId: string; running: boolean }) {
  const container = useRef<HTMLDivElement>(null);
  const [status, setStatus] = useState<Status>({ kind: "connecting" });
  const [attempt, setAttempt] = useState(0);
  // Opened once the sandbox first runs, and never torn down when it stops: what the terminal
  // showed stays readable after a pause or a kill.
  const [started, setStarted] = useState(running);
  if (running && !started) setStarted(true);

  // biome-ignore lint/correctness/useExhaustiveDependencies: each attempt ("New terminal") opens a new one
  useEffect(() => {
    if (!started || !container.current) return;
    const terminal = new XTerm({
      cursorBlink: true,
      fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace",
      fontSize: 14,
      // Room below the baseline: at 1.0 the DOM renderer's rows clip underscores in DejaVu Sans
      // Mono (Linux's usual monospace), so `a_b` showed as `a b`.
      lineHeight: 1.2,
      scrollback: 5000,
      theme: { background: "#1a1b1e" },
    });
    const fit = new FitAddon();
    terminal.loadAddon(fit);
    terminal.open(container.current);
    const fitVisible = () => {
      // A hidden tab has no size: fitting it would shrink the terminal to nothing.
      if (container.current?.offsetWidth) fit.fit();
    };
    fitVisible();

    const url = new URL(`/sandboxes/${encodeURIComponent(sandboxId)}/terminal`, window.location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    url.search = new URLSearchParams({ cols: String(terminal.cols), rows: String(terminal.rows) }).toString();
    const socket = new WebSocket(url);
    socket.binaryType = "arraybuffer";
    setStatus({ kind: "connecting" });
    let ended = false;

    socket.onopen = () => {
      setStatus({ kind: "open" });
      terminal.focus();
    };
    socket.onmessage = (event) => {
      if (typeof event.data !== "string") return terminal.write(new Uint8Array(event.data as ArrayBuffer));
      const message = JSON.parse(event.data) as { type: string; exitCode?: number; detail?: string };
      ended = true;
      if (message.type === "exit") setStatus({ kind: "exited", exitCode: message.exitCode ?? 0 });
      else if (message.type === "error") setStatus({ kind: "failed", detail: message.detail ?? "" });
    };
    socket.onclose = () => {
      if (!ended) setStatus({ kind: "closed" });
    };
    const encoder = new TextEncoder();
    const input = terminal.onData((data) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(encoder.encode(data));
    });
    const resize = terminal.onResize(({ cols, rows }) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "resize", cols, rows }));
    });
    const observer = new ResizeObserver(fitVisible);
    observer.observe(container.current);
    return () => {
      observer.disconnect();
      input.dispose();
      resize.dispose();
      socket.close();
      terminal.dispose();
    };
  }, [sandboxId, started, attempt]);

  if (!started)
    return (
      <Alert color="gray" title="No terminal">
        The terminal opens while the sandbox is Running.
      </Alert>
    );

  return (
    <Box>
      <Group justify="space-between" mb="xs">
        <TerminalStatus status={status} />
        {status.kind !== "open" && status.kind !== "connecting" && running && (
          <Button size="compact-sm" variant="light" onClick={() => setAttempt((value) => value + 1)}>
            New terminal
          </Button>
        )}
      </Group>
      {/* The padding sits on a frame around the terminal's own box: the fit addon sizes the
          terminal to its box's computed height, which with padding (border-box) is 16 px too tall. */}
      <Box style={{ height: 420, background: "#1a1b1e", borderRadius: 8, padding: 8 }}>
        <Box
          ref={container}
          role="application"
          aria-label="Terminal"
          data-testid="terminal"
          style={{ height: "100%" }}
        />
      </Box>
    </Box>
  );
}

function TerminalStatus({ status }: { status: Status }) {
  switch (status.kind) {
    case "connecting":
      return (
        <Badge color="yellow" variant="dot">
          Connecting…
        </Badge>
      );
    case "open":
      return (
        <Badge color="green" variant="dot">
          Connected
        </Badge>
      );
    case "exited":
      return (
        <Badge color="gray" variant="dot">
          Exited with code {status.exitCode}
        </Badge>
      );
    case "failed":
      return (
        <Text c="red" size="sm" role="alert">
          The terminal failed: {status.detail}
        </Text>
      );
    case "closed":
      return (
        <Text c="red" size="sm" role="alert">
          The terminal's connection closed (the sandbox stopped, or the network dropped).
        </Text>
      );
  }
}
