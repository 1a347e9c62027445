import { Type } from "@sinclair/typebox";

export const DiagnosticsQuery = Type.Object(
  {
    scope: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 32,
        default: "all",
        description:
          "logs: `container` (the sandbox's output), `lifecycle` or `all`; events: `lifecycle`, `runtime` or `all`.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const Diagnostics = Type.Object({
  text: Type.String({ description: "The text, its newest 8 MiB when there is more." }),
  truncated: Type.Boolean({ description: "True when older text was left out." }),
});
