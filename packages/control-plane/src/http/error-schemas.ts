import { Type } from "@sinclair/typebox";

export const ErrorBody = Type.Object(
  { code: Type.String(), detail: Type.String() },
  { additionalProperties: false },
);
export const errorResponses = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
};

/** A response without a body (204). */
export const NoContent = Type.Null({ description: "No content" });
export const deletedResponses = { 204: NoContent, ...errorResponses };
