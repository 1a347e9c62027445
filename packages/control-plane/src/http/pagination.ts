import { Type } from "@sinclair/typebox";

/** Highest page a list serves: with the largest page size the offset stays far inside a 64-bit integer. */
export const maxPage = 1_000_000;

/** The page a list asks for: fields to spread into its query schema. */
export const pageQueryFields = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: maxPage, default: 1 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 20 })),
};

/** Where a list's page sits in the whole. */
export const Pagination = Type.Object({
  page: Type.Integer(),
  pageSize: Type.Integer(),
  totalItems: Type.Integer(),
  totalPages: Type.Integer(),
  hasNextPage: Type.Boolean(),
});
