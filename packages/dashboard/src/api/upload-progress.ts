/** Bytes of a request body sent so far, and how many there are in all. */
export interface UploadProgress {
  sent: number;
  total: number;
}

const noBodyStatuses = new Set([101, 204, 205, 304]);

function responseHeaders(raw: string): Headers {
  const headers = new Headers();
  for (const line of raw.trim().split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  return headers;
}

/**
 * A `fetch` for one openapi-fetch call that sends `body` with XMLHttpRequest and reports each step
 * of the upload: fetch reports no upload progress, and Chromium streams a request body through
 * fetch only over HTTP/2. The request's method, URL, headers and signal are kept; its body is
 * `body` itself, so a file of gigabytes is read from disk as it is sent, never held in memory.
 */
export function fetchReportingUpload(body: Blob, onProgress: (progress: UploadProgress) => void) {
  return (request: Request) =>
    new Promise<Response>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(request.method, request.url);
      for (const [name, value] of request.headers) xhr.setRequestHeader(name, value);
      xhr.responseType = "blob";
      xhr.upload.onprogress = (event) => onProgress({ sent: event.loaded, total: event.total || body.size });
      xhr.onload = () =>
        resolve(
          new Response(noBodyStatuses.has(xhr.status) ? null : (xhr.response as Blob), {
            status: xhr.status,
            statusText: xhr.statusText,
            headers: responseHeaders(xhr.getAllResponseHeaders()),
          }),
        );
      xhr.onerror = () => reject(new TypeError("the connection failed"));
      xhr.onabort = () => reject(new DOMException("The upload was cancelled.", "AbortError"));
      if (request.signal.aborted) return reject(new DOMException("The upload was cancelled.", "AbortError"));
      request.signal.addEventListener("abort", () => xhr.abort(), { once: true });
      xhr.send(body);
    });
}
