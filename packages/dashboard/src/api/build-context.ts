import { createTar, parseTar, parseTarGzip, type TarFileInput } from "nanotar";

/** The longest name a plain tar header holds; a longer one would be cut, so it is refused. */
const maxNameBytes = 100;

const isTar = (name: string) => /\.tar$/i.test(name);
const isTarGzip = (name: string) => /\.(tar\.gz|tgz)$/i.test(name);

/**
 * A build context as a tar.gz, made in the browser: the Dockerfile written on the page at the
 * root, beside the chosen files. A chosen .tar or .tar.gz is unpacked into the context (its files;
 * links and empty folders are left out); with no Dockerfile written, the archive's own is used.
 */
export async function buildContext(dockerfile: string, files: File[]): Promise<Blob> {
  const entries = new Map<string, TarFileInput>();
  for (const file of files) {
    const items =
      isTar(file.name) || isTarGzip(file.name)
        ? await unpack(file)
        : [
            {
              name: file.name,
              data: new Uint8Array(await file.arrayBuffer()),
              attrs: { mtime: file.lastModified },
            },
          ];
    for (const item of items) entries.set(item.name, item);
  }
  if (dockerfile.trim()) entries.set("Dockerfile", { name: "Dockerfile", data: dockerfile });
  if (!entries.has("Dockerfile")) throw new Error("Write a Dockerfile, or choose an archive that holds one.");
  for (const name of entries.keys()) {
    if (new TextEncoder().encode(name).length > maxNameBytes)
      throw new Error(`The file name ${name} is longer than ${maxNameBytes} bytes.`);
  }
  // Owned by root in the context, as `docker build` makes them.
  const tar = createTar([...entries.values()], { attrs: { uid: 0, gid: 0 } });
  const gzipped = new Blob([tar as Uint8Array<ArrayBuffer>])
    .stream()
    .pipeThrough(new CompressionStream("gzip"));
  return new Response(gzipped).blob();
}

/** An archive's regular files, with their modes and times. */
async function unpack(file: File): Promise<TarFileInput[]> {
  const bytes = await file.arrayBuffer();
  let items: Awaited<ReturnType<typeof parseTarGzip>>;
  try {
    items = isTarGzip(file.name) ? await parseTarGzip(bytes) : parseTar(bytes);
  } catch {
    throw new Error(`${file.name} is not a readable ${isTarGzip(file.name) ? "tar.gz" : "tar"} archive.`);
  }
  return items
    .filter((item) => item.type === "file" || item.type === undefined)
    .map((item) => ({
      name: item.name.replace(/^\.\//, ""),
      // Without data the writer would make an empty file a folder.
      data: item.data ?? new Uint8Array(0),
      attrs: { mode: item.attrs?.mode, mtime: (item.attrs?.mtime ?? 0) * 1000 },
    }))
    .filter((item) => item.name !== "");
}
