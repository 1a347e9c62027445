import { type Static, type TSchema, Type } from "@sinclair/typebox";

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
export type Pagination = Static<typeof Pagination>;

/** The schema of one page of a list of `item`. */
export const Paginated = <T extends TSchema>(item: T) =>
  Type.Object({ items: Type.Array(item), pagination: Pagination });

/** One page of a list. */
export interface Page<T> {
  items: T[];
  pagination: Pagination;
}

/** Where page `page` of `pageSize` items sits among `totalItems`. */
export function pageOf(page: number, pageSize: number, totalItems: number): Pagination {
  const totalPages = Math.ceil(totalItems / pageSize);
  return { page, pageSize, totalItems, totalPages, hasNextPage: page < totalPages };
}

/** One page of a list held whole in memory. */
export function paginate<T>(all: T[], page = 1, pageSize = 20): Page<T> {
  const start = (page - 1) * pageSize;
  return { items: all.slice(start, start + pageSize), pagination: pageOf(page, pageSize, all.length) };
}
