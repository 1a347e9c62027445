import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  closestName,
  describeSchemaErrors,
  fieldPath,
  type SchemaError,
  unknownProperty,
} from "./validation-messages.js";

const word = fc.stringMatching(/^[a-z]{2,8}$/);
const camel = (words: string[]) =>
  words.map((part, index) => (index === 0 ? part : part.charAt(0).toUpperCase() + part.slice(1))).join("");

describe("closest known names", () => {
  test("a name in another case or with other separators finds its camelCase field", () => {
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 2, maxLength: 4 }),
        fc.constantFrom("_", "-", ""),
        (words, sep) => {
          const known = camel(words);
          const variants = [words.join("_"), words.join(sep).toUpperCase(), words.join("-")].filter(
            (variant) => variant !== known,
          );
          for (const variant of variants) expect(closestName(variant, ["zzzzzzzzzz", known])).toBe(known);
        },
      ),
    );
  });

  test("one typo in a name of three letters or more is found; the name itself is not suggested", () => {
    const typo = fc
      .tuple(fc.stringMatching(/^[a-z]{3,20}$/), fc.nat(), fc.constantFrom("a", "q", "x"), fc.nat(2))
      .map(([name, at, letter, kind]) => {
        const i = at % name.length;
        const edited =
          kind === 0
            ? name.slice(0, i) + letter + name.slice(i + 1)
            : kind === 1
              ? name.slice(0, i) + letter + name.slice(i)
              : name.slice(0, i) + name.slice(i + 1);
        return { name, edited };
      })
      .filter(({ name, edited }) => name !== edited);
    fc.assert(
      fc.property(typo, ({ name, edited }) => {
        expect(closestName(edited, [name])).toBe(name);
        expect(closestName(name, [name])).toBeUndefined();
      }),
    );
  });

  test("what is suggested is always one of the known names, and never a name far away", () => {
    fc.assert(
      fc.property(fc.string(), fc.array(fc.string()), (name, known) => {
        const meant = closestName(name, known);
        if (meant !== undefined) expect(known).toContain(meant);
      }),
    );
    expect(closestName("timeout", ["command", "cwd", "env", "timeoutMs", "background"])).toBe("timeoutMs");
    expect(closestName("cmd", ["command"])).toBeUndefined();
    expect(closestName("id", ["ip"])).toBeUndefined();
    expect(closestName("xyzzy", ["command", "cwd", "env", "timeoutMs"])).toBeUndefined();
  });
});

describe("messages name the part, the JSON path and the property", () => {
  test("paths read as JavaScript: dots for names, brackets for indexes and other keys", () => {
    expect(fieldPath("body", "resources", "cpu")).toBe("body.resources.cpu");
    expect(fieldPath("body", "binds", 0, "source")).toBe("body.binds[0].source");
    expect(fieldPath("headers", "x-request-id")).toBe('headers["x-request-id"]');
  });

  test("a long name is cut in the message, so a refusal does not echo a body back", () => {
    const name = "x".repeat(500_000);
    const text = unknownProperty("body", name, ["command"]);
    expect(text.length).toBeLessThan(300);
    expect(text).toBe(`body["${"x".repeat(100)}"…]: unknown property "${"x".repeat(100)}"…`);
  });

  test("an unknown property's message names it at its path, whatever its name", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 100 }), fc.array(fc.string()), (name, known) => {
        const text = unknownProperty("body.resources", name, known);
        expect(
          text.startsWith(`${fieldPath("body.resources", name)}: unknown property ${JSON.stringify(name)}`),
        ).toBe(true);
      }),
    );
  });

  const error = (keyword: string, instancePath: string, params: Record<string, unknown>, extra = {}) =>
    ({ keyword, instancePath, schemaPath: `#${instancePath}/${keyword}`, params, ...extra }) as SchemaError;

  test.each([
    [
      [
        error(
          "additionalProperties",
          "",
          { additionalProperty: "timeout" },
          { parentSchema: { properties: { command: {}, timeoutMs: {} } } },
        ),
      ],
      "body",
      'body.timeout: unknown property "timeout"; did you mean "timeoutMs"?',
    ],
    [
      [error("required", "/resources", { missingProperty: "cpu" })],
      "body",
      'body.resources: missing required property "cpu"',
    ],
    [
      [
        error(
          "required",
          "/networkPolicy/egress/0",
          { missingProperty: "target" },
          {
            data: { action: "allow", taget: "example.com" },
            parentSchema: { properties: { action: {}, target: {} } },
          },
        ),
      ],
      "body",
      'body.networkPolicy.egress[0]: missing required property "target"; did you mean "target" instead of "taget"?',
    ],
    [
      [error("type", "/memoryMb", { type: "integer" }, { message: "must be integer" })],
      "body",
      "body.memoryMb: must be integer",
    ],
    [[error("type", "/timeout", { type: "integer,null" })], "body", "body.timeout: must be integer or null"],
    [
      [error("maximum", "/limit", { limit: 100 }, { message: "must be <= 100" })],
      "querystring",
      "query.limit: must be <= 100",
    ],
    [
      [error("minLength", "/id", { limit: 1 }, { message: "must NOT have fewer than 1 characters" })],
      "params",
      "path.id: must NOT have fewer than 1 characters",
    ],
    [
      [error("enum", "/profile", { allowedValues: ["strict", "balanced"] }, { data: "balnced" })],
      "body",
      'body.profile: must be one of "strict", "balanced"; did you mean "balanced"?',
    ],
    [
      [
        {
          keyword: "const",
          instancePath: "/order",
          schemaPath: "#/properties/order/anyOf/0/const",
          params: { allowedValue: "asc" },
          data: "dsc",
        },
        {
          keyword: "const",
          instancePath: "/order",
          schemaPath: "#/properties/order/anyOf/1/const",
          params: { allowedValue: "desc" },
          data: "dsc",
        },
        { keyword: "anyOf", instancePath: "/order", schemaPath: "#/properties/order/anyOf", params: {} },
      ] as SchemaError[],
      "querystring",
      'query.order: must be one of "asc", "desc"; did you mean "asc"?',
    ],
    [
      [
        {
          keyword: "type",
          instancePath: "/policy",
          schemaPath: "#/properties/policy/anyOf/0/type",
          params: { type: "null" },
        },
        {
          keyword: "required",
          instancePath: "/policy",
          schemaPath: "#/properties/policy/anyOf/1/required",
          params: { missingProperty: "x" },
        },
        {
          keyword: "type",
          instancePath: "/policy/egress/0/action",
          schemaPath: "#/properties/policy/anyOf/1/properties/egress/items/properties/action/type",
          params: { type: "string" },
          message: "must be string",
        },
        { keyword: "anyOf", instancePath: "/policy", schemaPath: "#/properties/policy/anyOf", params: {} },
      ] as SchemaError[],
      "body",
      "body.policy.egress[0].action: must be string",
    ],
  ])("case %#", (errors, context, expected) => {
    expect(describeSchemaErrors(errors as SchemaError[], context)).toBe(expected);
  });
});
