// A stand-in for an AI provider's HTTP API, run inside a sandbox by the agent template tests:
//   node stand-in-provider.mjs PORT LOG_FILE ANSWER
// It listens on 127.0.0.1:PORT and answers every model call with the text ANSWER, in the shape
// of the API the path names (streamed as server-sent events when the request asks for a stream):
//   Anthropic  POST /v1/messages, POST /v1/messages/count_tokens
//   OpenAI     POST /v1/chat/completions, POST /v1/responses, GET /v1/models
//   Gemini     POST /v1beta/models/<model>:generateContent | :streamGenerateContent | :countTokens
// Each request is appended to LOG_FILE as one JSON line: method, url, headers and body.
import { appendFileSync } from "node:fs";
import { createServer } from "node:http";

const [port, logFile, answer] = process.argv.slice(2);
if (!port || !logFile || !answer) {
  console.error("usage: node stand-in-provider.mjs PORT LOG_FILE ANSWER");
  process.exit(2);
}

const usage = { input: 12, output: 4 };
const now = () => Math.floor(Date.now() / 1000);

function json(res, status, value) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

/** Writes server-sent events: [name, data] pairs (a null name writes a data-only event). */
function sse(res, events) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const [name, data] of events) {
    if (name) res.write(`event: ${name}\n`);
    res.write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
  }
  res.end();
}

function anthropicMessages(req, res, body) {
  if (req.url.startsWith("/v1/messages/count_tokens")) return json(res, 200, { input_tokens: usage.input });
  const model = body.model ?? "claude-stand-in";
  const message = {
    id: "msg_stand_in",
    type: "message",
    role: "assistant",
    model,
    content: [{ type: "text", text: answer }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: usage.input, output_tokens: usage.output },
  };
  if (!body.stream) return json(res, 200, message);
  sse(res, [
    [
      "message_start",
      {
        type: "message_start",
        message: {
          ...message,
          content: [],
          stop_reason: null,
          usage: { input_tokens: usage.input, output_tokens: 1 },
        },
      },
    ],
    [
      "content_block_start",
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    ],
    [
      "content_block_delta",
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: answer } },
    ],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    [
      "message_delta",
      {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: usage.output },
      },
    ],
    ["message_stop", { type: "message_stop" }],
  ]);
}

function openaiChat(res, body) {
  const model = body.model ?? "gpt-stand-in";
  const base = { id: "chatcmpl-stand-in", created: now(), model };
  const tokens = {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
  };
  if (!body.stream) {
    return json(res, 200, {
      ...base,
      object: "chat.completion",
      choices: [
        { index: 0, message: { role: "assistant", content: answer }, logprobs: null, finish_reason: "stop" },
      ],
      usage: tokens,
    });
  }
  const chunk = (choices, extra = {}) => [
    null,
    { ...base, object: "chat.completion.chunk", choices, ...extra },
  ];
  sse(res, [
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: answer }, finish_reason: null }]),
    chunk([{ index: 0, delta: {}, finish_reason: "stop" }]),
    chunk([], { usage: tokens }),
    [null, "[DONE]"],
  ]);
}

function openaiResponses(res, body) {
  const model = body.model ?? "gpt-stand-in";
  const text = { type: "output_text", text: answer, annotations: [] };
  const item = {
    type: "message",
    id: "msg_stand_in",
    status: "completed",
    role: "assistant",
    content: [text],
  };
  const response = (status, output) => ({
    id: "resp_stand_in",
    object: "response",
    created_at: now(),
    status,
    model,
    output,
    usage:
      status === "completed"
        ? {
            input_tokens: usage.input,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: usage.output,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: usage.input + usage.output,
          }
        : null,
  });
  if (!body.stream) return json(res, 200, response("completed", [item]));
  const at = { output_index: 0, item_id: item.id, content_index: 0 };
  let sequence = 0;
  const event = (type, data) => [type, { type, sequence_number: sequence++, ...data }];
  sse(res, [
    event("response.created", { response: response("in_progress", []) }),
    event("response.in_progress", { response: response("in_progress", []) }),
    event("response.output_item.added", {
      output_index: 0,
      item: { ...item, status: "in_progress", content: [] },
    }),
    event("response.content_part.added", { ...at, part: { ...text, text: "" } }),
    event("response.output_text.delta", { ...at, delta: answer }),
    event("response.output_text.done", { ...at, text: answer }),
    event("response.content_part.done", { ...at, part: text }),
    event("response.output_item.done", { output_index: 0, item }),
    event("response.completed", { response: response("completed", [item]) }),
  ]);
}

function gemini(req, res) {
  const method = req.url.split("?")[0].split(":").pop();
  if (method === "countTokens") return json(res, 200, { totalTokens: usage.input });
  const reply = {
    candidates: [{ content: { role: "model", parts: [{ text: answer }] }, finishReason: "STOP", index: 0 }],
    usageMetadata: {
      promptTokenCount: usage.input,
      candidatesTokenCount: usage.output,
      totalTokenCount: usage.input + usage.output,
    },
    modelVersion: "gemini-stand-in",
  };
  if (method === "streamGenerateContent") return sse(res, [[null, reply]]);
  if (method === "generateContent") return json(res, 200, reply);
  return json(res, 404, { error: { code: 404, message: `no method ${method}`, status: "NOT_FOUND" } });
}

function route(req, res, body) {
  const path = req.url.split("?")[0];
  if (req.method === "GET" && /\/models$/.test(path)) {
    return json(res, 200, {
      object: "list",
      data: [{ id: "stand-in-model", object: "model", created: now(), owned_by: "stand-in" }],
    });
  }
  if (req.method !== "POST") return json(res, 404, { error: { message: `no route ${req.method} ${path}` } });
  if (/\/messages(\/count_tokens)?$/.test(path)) return anthropicMessages(req, res, body);
  if (path.endsWith("/chat/completions")) return openaiChat(res, body);
  if (path.endsWith("/responses")) return openaiResponses(res, body);
  if (/\/models\/[^/]+:\w+$/.test(path)) return gemini(req, res);
  json(res, 404, { error: { message: `no route POST ${path}` } });
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const text = Buffer.concat(chunks).toString("utf8");
    appendFileSync(
      logFile,
      `${JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: text })}\n`,
    );
    let body = {};
    try {
      body = text ? JSON.parse(text) : {};
    } catch {
      return json(res, 400, { error: { message: "the body is not JSON" } });
    }
    route(req, res, body);
  });
});
// A WebSocket upgrade (some CLIs try one before plain HTTP) is logged and refused.
server.on("upgrade", (req, socket) => {
  appendFileSync(
    logFile,
    `${JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: "", upgrade: true })}\n`,
  );
  socket.end("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
});
server.listen(Number(port), "127.0.0.1", () => console.log(`stand-in provider on 127.0.0.1:${port}`));
