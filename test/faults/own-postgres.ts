import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// A PostgreSQL cluster of the test's own, on a port of its own, so stopping and starting it
// disturbs no one else's tests (the machine's shared cluster comes from scripts/test-postgres.sh).

const bin = (() => {
  const versions = execFileSync("ls", ["/usr/lib/postgresql"], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean);
  return `/usr/lib/postgresql/${versions.sort().at(-1)}/bin`;
})();

function asPostgres(command: string, args: string[]): string {
  return execFileSync("runuser", ["-u", "postgres", "--", join(bin, command), ...args], { encoding: "utf8" });
}

export class OwnPostgres {
  readonly dir: string;
  readonly port = 20_000 + Math.floor(Math.random() * 20_000);

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), "paddock-fault-pg-"));
    execFileSync("chown", ["postgres:postgres", this.dir]);
    asPostgres("initdb", ["-D", join(this.dir, "data"), "-U", "paddock", "--auth=trust", "-E", "UTF8"]);
  }

  get url(): string {
    return `postgres://paddock@127.0.0.1:${this.port}/postgres`;
  }

  start(): void {
    asPostgres("pg_ctl", [
      "-D",
      join(this.dir, "data"),
      "-o",
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1`,
      "-l",
      join(this.dir, "log"),
      "-w",
      "start",
    ]);
  }

  /** `fast`: clients disconnected, as a restart by its operator; `immediate`: as a crash. */
  stop(mode: "fast" | "immediate" = "fast"): void {
    asPostgres("pg_ctl", ["-D", join(this.dir, "data"), "-m", mode, "-w", "stop"]);
  }

  remove(): void {
    try {
      this.stop("immediate");
    } catch {
      // already stopped
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
