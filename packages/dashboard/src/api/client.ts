import createClient from "openapi-fetch";
import type { paths } from "paddock/schema";

/** An answer the API refused: its HTTP status and the stable `code` pages branch on. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(detail);
    this.name = "ApiError";
  }
}

const sessionExpiredListeners = new Set<() => void>();

/** Called when a call is refused for want of a session (it expired, or was logged out elsewhere). */
export function onUnauthenticated(listener: () => void): () => void {
  sessionExpiredListeners.add(listener);
  return () => sessionExpiredListeners.delete(listener);
}

/**
 * The one client every page calls the API through, typed from the committed OpenAPI document.
 * It authenticates with the session cookie that POST /auth/login sets (HttpOnly, SameSite=Strict),
 * so no credential is ever readable by the page's scripts.
 */
export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: "same-origin" });

api.use({
  onResponse({ request, response }) {
    if (response.status === 401 && !new URL(request.url).pathname.startsWith("/auth/login")) {
      for (const listener of sessionExpiredListeners) listener();
    }
    return undefined;
  },
});

/** The answer's body, or an ApiError carrying the server's `{code, detail}`. */
export async function ok<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let answer: { data?: T; error?: unknown; response: Response };
  try {
    answer = await pending;
  } catch (error) {
    if (isCancelled(error)) throw error;
    throw new ApiError(0, "connection_failed", `Paddock did not answer (${(error as Error).message}).`);
  }
  if (!answer.response.ok) {
    const body = (answer.error ?? {}) as { code?: string; detail?: string };
    throw new ApiError(
      answer.response.status,
      body.code ?? "unknown_error",
      body.detail ?? `The server answered ${answer.response.status} ${answer.response.statusText}.`,
    );
  }
  return answer.data as T;
}

/** True for the error a call ends with when its signal aborts it: the user cancelled it. */
export const isCancelled = (error: unknown) => error instanceof DOMException && error.name === "AbortError";

/** The human text of any error a page shows. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
