import {
  ActionIcon,
  Anchor,
  Breadcrumbs,
  Button,
  Card,
  FileButton,
  Group,
  Loader,
  Progress,
  Stack,
  Table,
  Text,
  TextInput,
  Tooltip,
} from "@mantine/core";
import { modals } from "@mantine/modals";
import { notifications } from "@mantine/notifications";
import { formatBytes } from "@paddock/common/format";
import { IconDownload, IconFile, IconFolder, IconTrash, IconUpload } from "@tabler/icons-react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { api, isCancelled, ok } from "../../api/client";
import type { FileInfo } from "../../api/types";
import { fetchReportingUpload, type UploadProgress } from "../../api/upload-progress";
import { ErrorAlert } from "../../components/page";
import { formatDateTime } from "../../format";

const join = (directory: string, name: string) => `${directory.replace(/\/$/, "")}/${name}`;
const nameOf = (path: string) => path.split("/").filter(Boolean).pop() ?? "/";

/** A file browser over the sandbox's files API: list, open folders, upload, download, delete. */
export function Files({ sandboxId, running }: { sandboxId: string; running: boolean }) {
  const [directory, setDirectory] = useState("/");
  const [typed, setTyped] = useState("/");
  const queryClient = useQueryClient();
  const key = ["files", sandboxId, directory];
  const params = (path: string) => ({ params: { path: { id: sandboxId }, query: { path } } });

  const listing = useQuery({
    queryKey: key,
    queryFn: async () => (await ok(api.GET("/sandboxes/{id}/files/list", params(directory)))).items,
    enabled: running,
    // The listing names the folder itself too; folders first, then by name.
    select: (items) =>
      items
        .filter((item) => item.path.replace(/\/$/, "") !== directory.replace(/\/$/, ""))
        .sort(
          (a, b) =>
            Number(b.type === "directory") - Number(a.type === "directory") || a.path.localeCompare(b.path),
        ),
  });

  const [progress, setProgress] = useState<UploadProgress & { name: string }>();
  const cancelUpload = useRef<AbortController>(undefined);
  const upload = useMutation({
    mutationFn: (file: File) => {
      const controller = new AbortController();
      cancelUpload.current = controller;
      setProgress({ name: file.name, sent: 0, total: file.size });
      return ok(
        api.POST("/sandboxes/{id}/files/upload", {
          ...params(join(directory, file.name)),
          body: file as never,
          bodySerializer: (body: unknown) => body as File,
          headers: { "content-type": "application/octet-stream" },
          signal: controller.signal,
          fetch: fetchReportingUpload(file, (step) => setProgress({ name: file.name, ...step })),
        }),
      );
    },
    onSuccess: (written) => {
      notifications.show({ message: `Uploaded ${written.path} (${formatBytes(written.size)})` });
      void queryClient.invalidateQueries({ queryKey: key });
    },
    // A cancelled upload leaves the sandbox's file as it was: the server writes a file only whole.
    onError: (error, file) => {
      if (isCancelled(error))
        notifications.show({ message: `Upload of ${file.name} cancelled; nothing was written` });
    },
    onSettled: () => setProgress(undefined),
  });

  const remove = useMutation({
    mutationFn: (file: FileInfo) =>
      ok(
        api.DELETE("/sandboxes/{id}/files", {
          params: {
            path: { id: sandboxId },
            query: { path: file.path, recursive: file.type === "directory" },
          },
        }),
      ),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: key }),
    onError: (error) =>
      notifications.show({ color: "red", title: "Could not delete", message: error.message }),
  });

  const open = (path: string) => {
    setDirectory(path || "/");
    setTyped(path || "/");
  };
  const crumbs = directory.split("/").filter(Boolean);

  if (!running) return <Text c="dimmed">Files can be browsed while the sandbox is Running.</Text>;

  return (
    <Card withBorder>
      <Group justify="space-between" mb="sm" wrap="wrap">
        <form
          onSubmit={(event) => {
            event.preventDefault();
            open(typed.trim());
          }}
        >
          <TextInput
            label="Folder"
            value={typed}
            onChange={(event) => setTyped(event.currentTarget.value)}
            w={320}
            rightSection={listing.isFetching ? <Loader size="xs" /> : undefined}
          />
        </form>
        <FileButton onChange={(file) => file && upload.mutate(file)}>
          {(props) => (
            <Button {...props} leftSection={<IconUpload size={16} />} loading={upload.isPending}>
              Upload
            </Button>
          )}
        </FileButton>
      </Group>
      <Breadcrumbs mb="sm" aria-label="Folder path" separator="›">
        <Anchor component="button" type="button" onClick={() => open("/")}>
          /
        </Anchor>
        {crumbs.map((part, index) => {
          const path = `/${crumbs.slice(0, index + 1).join("/")}`;
          return (
            <Anchor key={path} component="button" type="button" onClick={() => open(path)}>
              {part}
            </Anchor>
          );
        })}
      </Breadcrumbs>
      {progress && (
        <Group mb="sm" wrap="nowrap" align="flex-end">
          <Stack gap={4} flex={1}>
            <Text size="sm" role="status">
              Uploading {progress.name}: {formatBytes(progress.sent)} of {formatBytes(progress.total)}
            </Text>
            <Progress
              value={progress.total ? (100 * progress.sent) / progress.total : 0}
              aria-label={`Upload of ${progress.name}`}
            />
          </Stack>
          <Button variant="default" size="xs" onClick={() => cancelUpload.current?.abort()}>
            Cancel upload
          </Button>
        </Group>
      )}
      <ErrorAlert error={isCancelled(upload.error) ? undefined : upload.error} title="Upload failed" />
      <ErrorAlert error={listing.error} title={`Could not list ${directory}`} />
      <Table.ScrollContainer minWidth={560}>
        <Table verticalSpacing="xs" aria-label={`Files in ${directory}`}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Size</Table.Th>
              <Table.Th>Mode</Table.Th>
              <Table.Th>Modified</Table.Th>
              <Table.Th>Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {listing.data?.map((file) => (
              <Table.Tr key={file.path} data-file={nameOf(file.path)}>
                <Table.Td>
                  <Group gap={6} wrap="nowrap">
                    {file.type === "directory" ? (
                      <IconFolder size={16} aria-hidden />
                    ) : (
                      <IconFile size={16} aria-hidden />
                    )}
                    {file.type === "directory" ? (
                      <Anchor component="button" type="button" onClick={() => open(file.path)}>
                        {nameOf(file.path)}
                      </Anchor>
                    ) : (
                      <Text size="sm">{nameOf(file.path)}</Text>
                    )}
                  </Group>
                </Table.Td>
                <Table.Td>{file.type === "directory" ? "—" : formatBytes(file.size)}</Table.Td>
                <Table.Td ff="monospace">{file.mode}</Table.Td>
                <Table.Td>{formatDateTime(file.modified_at || null)}</Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    {file.type === "file" && (
                      <Tooltip label="Download">
                        <ActionIcon
                          component="a"
                          variant="subtle"
                          href={`/sandboxes/${encodeURIComponent(sandboxId)}/files/download?${new URLSearchParams({ path: file.path })}`}
                          download={nameOf(file.path)}
                          aria-label={`Download ${nameOf(file.path)}`}
                        >
                          <IconDownload size={16} />
                        </ActionIcon>
                      </Tooltip>
                    )}
                    <Tooltip label="Delete">
                      <ActionIcon
                        variant="subtle"
                        color="red"
                        aria-label={`Delete ${nameOf(file.path)}`}
                        onClick={() =>
                          modals.openConfirmModal({
                            title: `Delete ${file.path}?`,
                            children: (
                              <Text size="sm">
                                {file.type === "directory"
                                  ? "The folder and everything in it are"
                                  : "The file is"}{" "}
                                removed from the sandbox.
                              </Text>
                            ),
                            labels: { confirm: "Delete", cancel: "Cancel" },
                            confirmProps: { color: "red" },
                            onConfirm: () => remove.mutate(file),
                          })
                        }
                      >
                        <IconTrash size={16} />
                      </ActionIcon>
                    </Tooltip>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {listing.data?.length === 0 && (
        <Text c="dimmed" ta="center" p="md">
          This folder is empty.
        </Text>
      )}
    </Card>
  );
}
