import { execFile } from "node:child_process";

/** Builds `tag` from a Dockerfile given as text (no build context), for tests that need an image of their own. */
export function buildTestImage(tag: string, dockerfile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const build = execFile("docker", ["build", "-q", "-t", tag, "-"], (error) =>
      error ? reject(error) : resolve(),
    );
    build.stdin?.end(dockerfile);
  });
}
