import type { ErrorDefinition } from "@paddock/common/errors";

/**
 * Codes execd answers with that the control plane's registry (`control-plane/src/errors.ts`)
 * defines for its own answers: registered again in common, they would be defined twice in the
 * control plane's process. Same code and status on both sides, except `language_unavailable`,
 * which the control plane answers with 400 (the template's choice) where execd says 501.
 */
export const SharedCodes = {
  permissionDenied: {
    code: "permission_denied",
    status: 403,
    summary: "The sandbox refused access to that path.",
  },
  rangeNotSatisfiable: {
    code: "range_not_satisfiable",
    status: 416,
    summary: "The requested byte range is outside the file.",
  },
  languageUnavailable: {
    code: "language_unavailable",
    status: 501,
    summary: "The sandbox's image has no interpreter for that language.",
  },
} as const satisfies Record<string, ErrorDefinition>;
