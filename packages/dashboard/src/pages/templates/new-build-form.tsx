import { Button, FileInput, Stack, Text, Textarea, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { formatBytes } from "@paddock/common/format";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useNavigate } from "react-router";
import { buildContext } from "../../api/build-context";
import { startBuild, templateKeys } from "../../api/templates";
import type { UploadProgress } from "../../api/upload-progress";
import { ErrorAlert } from "../../components/page";

const namePattern = /^[a-z0-9._-]{1,63}$/;
const exampleDockerfile = "FROM ubuntu\nCOPY requirements.txt /srv/\nRUN echo ready";

/**
 * A build from a Dockerfile written here and files chosen here: the page packs them into a
 * build context (tar.gz) and sends it; the build's page then follows its log.
 */
export function NewBuildForm({ name = "", onStarted }: { name?: string; onStarted?: () => void }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>();
  const [progress, setProgress] = useState<UploadProgress>();
  const form = useForm({
    initialValues: { name, description: "", dockerfile: "", files: [] as File[] },
    validate: {
      name: (value) => (namePattern.test(value) ? null : "1 to 63 of a–z, 0–9, dot, dash and underscore"),
    },
  });

  const submit = form.onSubmit(async (values) => {
    setError(undefined);
    try {
      const context = await buildContext(values.dockerfile, values.files);
      const { build } = await startBuild(values.name, context, {
        description: values.description.trim() || undefined,
        onProgress: setProgress,
      });
      void queryClient.invalidateQueries({ queryKey: templateKeys.all });
      void queryClient.invalidateQueries({ queryKey: templateKeys.one(values.name) });
      navigate(`/templates/${encodeURIComponent(values.name)}?build=${encodeURIComponent(build.id)}`);
      onStarted?.();
    } catch (failure) {
      setError(failure);
    } finally {
      setProgress(undefined);
    }
  });

  return (
    <form onSubmit={submit}>
      <Stack>
        <ErrorAlert error={error} title="Could not start the build" />
        <TextInput
          label="Template name"
          description="Sandboxes start from it by this name; a build of an existing name replaces it once it succeeds."
          required
          readOnly={Boolean(name)}
          {...form.getInputProps("name")}
        />
        <TextInput label="Description" {...form.getInputProps("description")} />
        <Textarea
          label="Dockerfile"
          description="Left empty, the Dockerfile in a chosen archive is used."
          autosize
          minRows={6}
          maxRows={20}
          placeholder={exampleDockerfile}
          spellCheck={false}
          styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
          {...form.getInputProps("dockerfile")}
        />
        <FileInput
          label="Files"
          description="Beside the Dockerfile in the build context, for its COPY lines; a .tar or .tar.gz is unpacked into it."
          multiple
          clearable
          {...form.getInputProps("files")}
        />
        {progress && (
          <Text size="sm" c="dimmed" role="status">
            Sending the build context: {formatBytes(progress.sent)} of {formatBytes(progress.total)}
          </Text>
        )}
        <Button type="submit" loading={form.submitting}>
          Build
        </Button>
      </Stack>
    </form>
  );
}
