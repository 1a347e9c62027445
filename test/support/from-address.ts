import { type IncomingHttpHeaders, request } from "node:http";

/** `body` is `any`, as `JSON.parse` gives it: each test knows the shape of the answer it asked for. */
export type AnswerFrom = { status: number; headers: IncomingHttpHeaders; body: any };

/**
 * A JSON request sent from `localAddress`, one of the loopback addresses (127.0.0.0/8 all reach a
 * server listening on 127.0.0.1): the server sees a client at that address, as it would see
 * clients on other machines.
 */
export function callFrom(
  localAddress: string,
  url: string,
  method: string,
  body?: unknown,
  token?: string,
  headers: Record<string, string> = {},
): Promise<AnswerFrom> {
  const target = new URL(url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const sent = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method,
        localAddress,
        headers: {
          ...(payload === undefined ? {} : { "content-type": "application/json" }),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...headers,
        },
      },
      (answer) => {
        let text = "";
        answer.setEncoding("utf8");
        answer.on("data", (chunk: string) => {
          text += chunk;
        });
        answer.on("end", () =>
          resolve({
            status: answer.statusCode ?? 0,
            headers: answer.headers,
            body: text ? JSON.parse(text) : undefined,
          }),
        );
      },
    );
    sent.on("error", reject);
    sent.end(payload);
  });
}
