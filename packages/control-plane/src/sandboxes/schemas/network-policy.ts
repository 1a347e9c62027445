import { Type } from "@sinclair/typebox";

const strict = { additionalProperties: false } as const;
const Action = Type.Union([Type.Literal("allow"), Type.Literal("deny")]);

export const NetworkRule = Type.Object(
  {
    action: Action,
    target: Type.String({
      minLength: 1,
      maxLength: 253,
      description: "A domain, `*.domain` (its subdomains, not the domain itself), an IP address or a CIDR.",
    }),
  },
  strict,
);

const Rules = Type.Array(NetworkRule, { maxItems: 1000 });

/** Outbound policy for a sandbox; enforced in the kernel by its egress sidecar. */
export const NetworkPolicy = Type.Object(
  {
    defaultAction: Type.Optional(Action),
    egress: Type.Optional(Rules),
  },
  {
    ...strict,
    description: "Rules apply in order; the first match wins; no match: defaultAction (deny when omitted).",
  },
);

export const EnforcedPolicy = Type.Object({
  mode: Type.Union([Type.Literal("allow_all"), Type.Literal("deny_all"), Type.Literal("enforcing")]),
  policy: Type.Object({ defaultAction: Action, egress: Rules }),
});

export const PolicyPatch = Type.Object(
  {
    egress: Type.Array(NetworkRule, {
      minItems: 1,
      maxItems: 1000,
      description: "Placed ahead of the existing rules; a rule for an existing target replaces it.",
    }),
  },
  strict,
);

export const PolicyRemoval = Type.Object(
  { target: Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { minItems: 1, maxItems: 1000 }) },
  strict,
);
