import type { Command } from "commander";
import { type MemoryEntry, Paddock } from "paddock";
import { connectionOf, type GlobalOptions } from "../connection.js";
import { collect, formatTime, printJson, printTable } from "../output.js";

interface MemoryOptions<Tag> extends GlobalOptions {
  json?: boolean;
  tag: Tag;
}

/** `paddock memory add|list|search|delete`: text that outlives sandboxes. */
export function registerMemoryCommands(program: Command): void {
  const memory = program.command("memory").description("text that outlives sandboxes, searched by relevance");
  const paddockOf = (command: Command) => new Paddock(connectionOf(command.optsWithGlobals<GlobalOptions>()));

  memory
    .command("add")
    .description("remember a text")
    .argument("<text>", "what to remember")
    .option("--tag <tag>", "a tag to find it by (repeatable)", collect, [])
    .option("--json", "print the entry as JSON")
    .action(async (text: string, _options, command: Command) => {
      const options = command.optsWithGlobals<MemoryOptions<string[]>>();
      const entry = await paddockOf(command).memory.add(
        text,
        options.tag.length ? { tags: options.tag } : {},
      );
      if (options.json) printJson(entry);
      else console.log(`Remembered ${entry.id}`);
    });

  memory
    .command("list")
    .description("list entries, newest first")
    .option("--tag <tag>", "only entries with this tag")
    .option("--json", "print the entries as JSON")
    .action(async (_options, command: Command) => {
      const options = command.optsWithGlobals<MemoryOptions<string | undefined>>();
      const paddock = paddockOf(command);
      const items: MemoryEntry[] = [];
      for (let page = 1; ; page++) {
        const list = await paddock.memory.list({
          ...(options.tag ? { tag: options.tag } : {}),
          page,
          pageSize: 200,
        });
        items.push(...list.items);
        if (!list.pagination.hasNextPage) break;
      }
      if (options.json) printJson(items);
      else printTable(["ID", "CREATED", "TAGS", "CONTENT"], items.map(entryRow));
    });

  memory
    .command("search")
    .description("entries matching the words of a query, best first")
    .argument("<query>", "the words to look for")
    .option("--json", "print the matches as JSON")
    .action(async (query: string, _options, command: Command) => {
      const options = command.optsWithGlobals<GlobalOptions & { json?: boolean }>();
      const hits = await paddockOf(command).memory.search(query);
      if (options.json) printJson(hits);
      else
        printTable(
          ["SCORE", "ID", "CREATED", "TAGS", "CONTENT"],
          hits.map((hit) => [hit.score.toFixed(2), ...entryRow(hit)]),
        );
    });

  memory
    .command("delete")
    .description("forget an entry")
    .argument("<id>", "the entry's id")
    .action(async (id: string, _options, command: Command) => {
      await paddockOf(command).memory.delete(id);
      console.log(`Deleted ${id}`);
    });
}

/** An entry's columns; the content on one line, cut at 60 characters. */
function entryRow(entry: MemoryEntry): string[] {
  const content = entry.content.replace(/\s+/g, " ").trim();
  return [
    entry.id,
    formatTime(entry.createdAt),
    entry.tags.join(", ") || "-",
    content.length > 60 ? `${content.slice(0, 59)}…` : content,
  ];
}
