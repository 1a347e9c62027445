import { type ErrorDefinition, Errors, errorDefinitionOf, PaddockError } from "@paddock/common";

/**
 * execd's names for what the rest of Paddock calls otherwise: its file errors take the control
 * plane's file names, a missing interpreter is the template's choice (`language_unavailable`).
 */
const renamed: Record<string, string> = {
  invalid_json: Errors.invalidRequest.code,
  not_found: Errors.fileNotFound.code,
  already_exists: Errors.fileConflict.code,
  directory_not_empty: Errors.fileConflict.code,
  bash_unavailable: Errors.languageUnavailable.code,
};

/** Codes that mean execd was called wrongly by us: a fault of ours, never passed on as the caller's. */
const callerFaults = new Set(["unauthorized", "method_not_allowed", "not_implemented", "internal_error"]);

/**
 * The registry's error for a code execd answered (`{code, message}`), by code, never by status
 * (several meanings share a 409); undefined for a code the registry does not know and for a
 * fault of ours.
 */
export function execdErrorByCode(code: string): ErrorDefinition | undefined {
  return callerFaults.has(code) ? undefined : errorDefinitionOf(renamed[code] ?? code);
}

/** execd's refusal (a non-2xx answer) as a registry error; an unknown code by its status class. */
export async function execdRefusal(response: Response): Promise<PaddockError> {
  const answer = (await response.json().catch(() => ({}))) as { code?: unknown; message?: string };
  const known = typeof answer.code === "string" ? execdErrorByCode(answer.code) : undefined;
  return new PaddockError(
    known ?? (response.status >= 500 ? Errors.endpointUnavailable : Errors.invalidRequest),
    answer.message ?? `the sandbox answered ${response.status}`,
  );
}
