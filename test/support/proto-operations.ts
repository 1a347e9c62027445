import { readFileSync } from "node:fs";
import type { Operation, Schema } from "./openapi-fuzz.js";

// The RPCs of a .proto service as operations for the OpenAPI fuzzer: each a POST of its request
// message in Connect's JSON encoding (proto3 JSON: 64-bit integers and bytes as strings, enums by
// name, field names in lowerCamelCase). Enough of the proto grammar for envd's two services.

interface Message {
  fields: Array<{ name: string; type: string; repeated: boolean; map?: [string, string] }>;
}

const scalars: Record<string, Schema> = {
  string: { type: "string" },
  bool: { type: "boolean" },
  bytes: { type: "string", format: "byte" },
  int32: { type: "integer", minimum: -(2 ** 31), maximum: 2 ** 31 - 1 },
  sint32: { type: "integer", minimum: -(2 ** 31), maximum: 2 ** 31 - 1 },
  uint32: { type: "integer", minimum: 0, maximum: 2 ** 32 - 1 },
  int64: { type: "string" },
  uint64: { type: "string" },
  double: { type: "number" },
  float: { type: "number" },
};

const camel = (name: string) => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

/** Each RPC of the file's services: `POST /<package>.<Service>/<Method>`, with its request's schema. */
export function protoOperations(file: string): Operation[] {
  const text = readFileSync(file, "utf8").replace(/\/\/.*$/gm, "");
  const packageName = /package\s+([\w.]+)\s*;/.exec(text)?.[1] ?? "";
  const tokens: string[] = text.match(/[\w.]+|[{}()<>;=,]/g) ?? [];
  const messages = new Map<string, Message>();
  const enums = new Map<string, string[]>();
  const rpcs: Array<{ service: string; method: string; request: string; streaming: boolean }> = [];

  /** Reads a message or enum body at `i` (after its `{`), under the scope `scope`. */
  const readBody = (i: number, scope: string, kind: "message" | "enum" | "oneof", into?: Message): number => {
    const message = into ?? { fields: [] };
    const values: string[] = [];
    while (i < tokens.length && tokens[i] !== "}") {
      const token = tokens[i] as string;
      if (token === "message" || token === "enum") {
        const name = `${scope}.${tokens[i + 1]}`;
        i = readBody(i + 3, name, token);
      } else if (token === "oneof") {
        i = readBody(i + 3, scope, "oneof", message);
      } else if (token === "option" || token === "reserved") {
        while (tokens[i] !== ";") i++;
        i++;
      } else if (kind === "enum") {
        values.push(token);
        while (tokens[i] !== ";") i++;
        i++;
      } else if (token === "map") {
        // map < K , V > name = n ;
        message.fields.push({
          name: tokens[i + 6] as string,
          type: "map",
          repeated: false,
          map: [tokens[i + 2] as string, tokens[i + 4] as string],
        });
        while (tokens[i] !== ";") i++;
        i++;
      } else {
        const repeated = token === "repeated";
        const start = repeated || token === "optional" ? i + 1 : i;
        message.fields.push({ name: tokens[start + 1] as string, type: tokens[start] as string, repeated });
        while (tokens[i] !== ";") i++;
        i++;
      }
    }
    if (kind === "message") messages.set(scope, message);
    if (kind === "enum") enums.set(scope, values);
    return i + 1;
  };

  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i] === "message" || tokens[i] === "enum") {
      i = readBody(i + 3, tokens[i + 1] as string, tokens[i] as "message" | "enum") - 1;
    } else if (tokens[i] === "service") {
      const service = tokens[i + 1] as string;
      i += 3;
      while (tokens[i] !== "}") {
        if (tokens[i] === "rpc") {
          const method = tokens[i + 1] as string;
          const clientStream = tokens[i + 3] === "stream";
          const request = tokens[i + (clientStream ? 4 : 3)] as string;
          const returns = tokens.indexOf("returns", i);
          rpcs.push({
            service,
            method,
            request,
            streaming: clientStream || tokens[returns + 2] === "stream",
          });
        }
        i++;
      }
    }
  }

  /** A type name as seen from `scope`: the innermost enclosing message's own first. */
  const lookup = (type: string, scope: string): string => {
    const parts = scope.split(".");
    for (let depth = parts.length; depth >= 0; depth--) {
      const candidate = [...parts.slice(0, depth), type].join(".");
      if (messages.has(candidate) || enums.has(candidate)) return candidate;
    }
    return type;
  };

  const schemaOf = (type: string, scope: string, depth: number): Schema => {
    const scalar = scalars[type];
    if (scalar) return scalar;
    const name = lookup(type, scope);
    const values = enums.get(name);
    if (values) return { enum: values };
    const message = messages.get(name);
    if (!message || depth > 5) return { type: "object" };
    const properties: Record<string, Schema> = {};
    for (const field of message.fields) {
      const schema = field.map
        ? { type: "object", additionalProperties: schemaOf(field.map[1], name, depth + 1) }
        : schemaOf(field.type, name, depth + 1);
      properties[camel(field.name)] = field.repeated ? { type: "array", items: schema } : schema;
    }
    return { type: "object", properties };
  };

  // A streaming call is sent as Connect's enveloped JSON (`application/connect+json`).
  return rpcs.map(({ service, method, request, streaming }) => {
    const path = `/${packageName}.${service}/${method}`;
    return {
      id: `POST ${path}`,
      method: "POST",
      path,
      parameters: [],
      body: {
        contentType: streaming ? "application/connect+json" : "application/json",
        schema: schemaOf(request, "", 0),
      },
      responses: ["200"],
    };
  });
}
