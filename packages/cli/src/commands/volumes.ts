import { formatBytes } from "@paddock/common/format";
import type { Command } from "commander";
import { Paddock } from "paddock";
import { connectionOf, type GlobalOptions } from "../connection.js";
import { formatTime, printJson, printRecord, printTable } from "../output.js";

/** `paddock volumes create|list|delete`: the account's volumes (sandbox create --volume). */
export function registerVolumeCommands(program: Command): void {
  const volumes = program
    .command("volumes")
    .description("named volumes of a fixed size, mounted into sandboxes (sandbox create --volume)");
  const client = (command: Command) => {
    const options = command.optsWithGlobals<GlobalOptions & { json?: boolean; size?: string }>();
    return { options, paddock: new Paddock(connectionOf(options)) };
  };

  volumes
    .command("create")
    .description("create an empty volume")
    .argument("<name>", "1 to 63 letters, digits, _ and -")
    .option("--size <size>", 'most it holds, like "1Gi" (default: the server\'s)')
    .option("--json", "print the volume as JSON")
    .action(async (name: string, _options, command: Command) => {
      const { options, paddock } = client(command);
      const volume = await paddock.volumes.create(name, options.size ? { size: options.size } : {});
      if (options.json) printJson(volume);
      else
        printRecord([
          ["id", volume.id],
          ["name", volume.name],
          ["size", formatBytes(volume.sizeBytes)],
          ["created", formatTime(volume.createdAt)],
        ]);
    });

  volumes
    .command("list")
    .description("list the account's volumes")
    .option("--json", "print the volumes as JSON")
    .action(async (_options, command: Command) => {
      const { options, paddock } = client(command);
      const items = await paddock.volumes.list();
      if (options.json) printJson(items);
      else
        printTable(
          ["ID", "NAME", "SIZE", "CREATED"],
          items.map((volume) => [
            volume.id,
            volume.name,
            formatBytes(volume.sizeBytes),
            formatTime(volume.createdAt),
          ]),
        );
    });

  volumes
    .command("delete")
    .description("delete a volume and its files (refused while a sandbox mounts it)")
    .argument("<id>", "the volume's id (see `paddock volumes list`)")
    .action(async (id: string, _options, command: Command) => {
      await client(command).paddock.volumes.delete(id);
      console.log(`Deleted volume ${id}`);
    });
}
