import { type NumberOptions, type StringOptions, Type } from "@sinclair/typebox";

export const ErrorResponse = Type.Object(
  { code: Type.String(), message: Type.String() },
  { additionalProperties: false },
);

export const StringMap = (options: { maxProperties?: number; maxValueLength?: number } = {}) =>
  Type.Record(Type.String({ maxLength: 253 }), Type.String({ maxLength: options.maxValueLength ?? 4096 }), {
    maxProperties: options.maxProperties ?? 256,
  });

/** Error responses every route can give. */
export const errorResponses = {
  400: ErrorResponse,
  401: ErrorResponse,
  404: ErrorResponse,
  409: ErrorResponse,
};

/** A response without a body (202 accepted, 204 deleted): handlers send nothing. */
export const Empty = Type.Null();

/**
 * `string | null` and `integer | null` as one schema with a type list, so that query coercion
 * never turns a JSON null into "" or 0 (a union coerces into its first branch).
 */
export const NullableString = (options: StringOptions = {}) =>
  Type.Unsafe<string | null>({ ...options, type: ["string", "null"] });
export const NullableInteger = (options: NumberOptions = {}) =>
  Type.Unsafe<number | null>({ ...options, type: ["integer", "null"] });
