import { Type } from "@sinclair/typebox";

const strict = { additionalProperties: false } as const;

/** Names look like environment variables, so a secret can be injected under its own name. */
export const secretNamePattern = "^[A-Za-z_][A-Za-z0-9_]{0,127}$";
export const SecretName = Type.String({
  pattern: secretNamePattern,
  description: "Letters, digits and underscores, not starting with a digit; at most 128 characters.",
});

export const SetSecretRequest = Type.Object(
  {
    name: SecretName,
    value: Type.String({
      minLength: 1,
      // NUL cannot travel in an environment variable.
      pattern: "^[^\\u0000]*$",
      description: "At most 64 KiB (UTF-8). Stored encrypted; no route ever returns it.",
    }),
  },
  strict,
);

/** What the API says about a secret: never its value. */
export const Secret = Type.Object({
  name: Type.String(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

export const SecretList = Type.Object({ items: Type.Array(Secret) });
export const SecretParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 256 }) });

/** On sandbox create: environment variable name → name of a stored secret. */
export const SecretInjection = Type.Record(Type.String({ pattern: secretNamePattern }), SecretName, {
  maxProperties: 64,
  // Keys that are not environment-variable names are refused, not ignored.
  additionalProperties: false,
  description:
    "Environment variables filled from stored secrets: `{ENV_NAME: SECRET_NAME}`. The values reach processes the sandbox runs but are never returned or stored in the sandbox record.",
});
