import {
  ActionIcon,
  Badge,
  Button,
  Group,
  Mark,
  Pagination,
  Paper,
  Spoiler,
  Stack,
  TagsInput,
  Text,
  Textarea,
  TextInput,
  Title,
} from "@mantine/core";
import { useForm } from "@mantine/form";
import { useDebouncedValue } from "@mantine/hooks";
import { modals } from "@mantine/modals";
import { notifications } from "@mantine/notifications";
import { IconTrash } from "@tabler/icons-react";
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type ReactNode, useState } from "react";
import { api, ok } from "../api/client";
import type { MemoryEntry } from "../api/types";
import { ErrorAlert, Page } from "../components/page";
import { formatDateTime } from "../format";
import { highlightedParts } from "./memory-snippet";

const memoryKey = ["memory"];
const tagPattern = /^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}$/;
const tagRule = "Letters, digits and _ . : / -, starting with a letter or digit; at most 64 characters.";

function excerpt(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** The account's memory: text that outlives sandboxes, added, listed by tag and searched. */
export function MemoryPage() {
  const [tagInput, setTagInput] = useState("");
  const [tag] = useDebouncedValue(tagInput.trim(), 300);
  const tagValid = tag === "" || tagPattern.test(tag);
  const [searchInput, setSearchInput] = useState("");
  const [search, setSearch] = useState("");
  const filter = tag && tagValid ? { tag } : {};

  return (
    <Page title="Memory">
      <AddEntryForm />
      <Stack gap="sm">
        <Title order={2} size="h4">
          Entries
        </Title>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            setSearch(searchInput.trim());
          }}
        >
          <Stack gap="sm">
            <TextInput
              label="Search"
              description="Matches any of the words, best matches first"
              maxLength={1000}
              value={searchInput}
              onChange={(event) => setSearchInput(event.currentTarget.value)}
            />
            <TextInput
              label="Filter by tag"
              description="Applies to the list and to search"
              value={tagInput}
              onChange={(event) => setTagInput(event.currentTarget.value)}
              error={tagValid ? undefined : tagRule}
            />
            <Group>
              <Button type="submit">Search</Button>
              {search && (
                <Button variant="default" onClick={() => setSearch("")}>
                  Show all entries
                </Button>
              )}
            </Group>
          </Stack>
        </form>
        {search ? (
          <SearchResults query={search} filter={filter} />
        ) : (
          // Keyed by the tag, so a new filter starts at its first page.
          <EntryList key={filter.tag ?? ""} filter={filter} />
        )}
      </Stack>
    </Page>
  );
}

function AddEntryForm() {
  const queryClient = useQueryClient();
  const form = useForm({
    initialValues: { content: "", tags: [] as string[] },
    validate: {
      content: (value) => (value.trim() ? null : "Enter the text to remember"),
      tags: (tags) => (tags.every((tag) => tagPattern.test(tag)) ? null : tagRule),
    },
  });
  const add = useMutation({
    mutationFn: (body: typeof form.values) => ok(api.POST("/memory", { body })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: memoryKey });
      form.reset();
      notifications.show({ color: "green", message: "Entry added to memory." });
    },
  });
  return (
    <Paper withBorder p="md">
      <form onSubmit={form.onSubmit((values) => add.mutate(values))} noValidate>
        <Stack>
          <Title order={2} size="h4">
            Add an entry
          </Title>
          <ErrorAlert error={add.error} title="Could not add the entry" />
          <Textarea
            label="Content"
            autosize
            minRows={3}
            maxRows={12}
            required
            {...form.getInputProps("content")}
          />
          <TagsInput
            label="Tags"
            maxTags={32}
            description="Press Enter after each tag"
            {...form.getInputProps("tags")}
          />
          <Group>
            <Button type="submit" loading={add.isPending}>
              Add entry
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}

function EntryList({ filter }: { filter: { tag?: string } }) {
  const [page, setPage] = useState(1);
  const entries = useQuery({
    queryKey: [...memoryKey, "list", filter.tag, page],
    queryFn: () => ok(api.GET("/memory", { params: { query: { ...filter, page } } })),
    placeholderData: keepPreviousData,
  });
  const items = entries.data?.items ?? [];
  const totalPages = entries.data?.pagination.totalPages ?? 0;
  return (
    <>
      <ErrorAlert error={entries.error} title="Could not load memory" />
      {entries.data?.pagination.totalItems === 0 && (
        <Text c="dimmed">{filter.tag ? `No entry is tagged ${filter.tag}.` : "Nothing in memory yet."}</Text>
      )}
      {items.map((entry) => (
        <EntryCard key={entry.id} entry={entry}>
          {entry.content}
        </EntryCard>
      ))}
      {totalPages > 1 && (
        <Group justify="center">
          <Pagination
            total={totalPages}
            value={page}
            onChange={setPage}
            getControlProps={(control) => ({ "aria-label": `${control} page` })}
          />
        </Group>
      )}
    </>
  );
}

function SearchResults({ query, filter }: { query: string; filter: { tag?: string } }) {
  const hits = useQuery({
    queryKey: [...memoryKey, "search", query, filter.tag],
    queryFn: () => ok(api.GET("/memory/search", { params: { query: { q: query, ...filter } } })),
  });
  const items = hits.data?.items ?? [];
  return (
    <>
      <ErrorAlert error={hits.error} title="Could not search memory" />
      {hits.isSuccess && (
        <Text size="sm" c="dimmed" role="status">
          {items.length === 0
            ? "Nothing matches."
            : `${items.length} match${items.length === 1 ? "" : "es"}, best first`}
        </Text>
      )}
      {items.map((hit) => (
        <EntryCard key={hit.id} entry={hit}>
          {highlightedParts(hit.snippet).map((part, index) =>
            // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one snippet never move
            part.marked ? <Mark key={index}>{part.text}</Mark> : <span key={index}>{part.text}</span>,
          )}
        </EntryCard>
      ))}
    </>
  );
}

function EntryCard({ entry, children }: { entry: MemoryEntry; children: ReactNode }) {
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: () => ok(api.DELETE("/memory/{id}", { params: { path: { id: entry.id } } })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: memoryKey });
      notifications.show({ color: "green", message: "Entry deleted." });
    },
  });
  const confirmDelete = () =>
    modals.openConfirmModal({
      title: "Delete this entry?",
      children: <Text size="sm">“{excerpt(entry.content)}” is forgotten for good.</Text>,
      labels: { confirm: "Delete", cancel: "Cancel" },
      confirmProps: { color: "red" },
      onConfirm: () => remove.mutate(),
    });
  return (
    <Paper withBorder p="sm">
      <Stack gap="xs">
        <ErrorAlert error={remove.error} title="Could not delete the entry" />
        <Spoiler maxHeight={120} showLabel="Show more" hideLabel="Show less">
          <Text style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>{children}</Text>
        </Spoiler>
        <Group justify="space-between" wrap="nowrap" align="flex-end">
          <Group gap={6}>
            <Text size="xs" c="dimmed">
              {formatDateTime(entry.createdAt)}
            </Text>
            {entry.tags.map((tag) => (
              <Badge key={tag} variant="light">
                {tag}
              </Badge>
            ))}
          </Group>
          <ActionIcon
            variant="subtle"
            color="red"
            aria-label={`Delete entry “${excerpt(entry.content)}”`}
            loading={remove.isPending}
            onClick={confirmDelete}
          >
            <IconTrash size={18} />
          </ActionIcon>
        </Group>
      </Stack>
    </Paper>
  );
}
