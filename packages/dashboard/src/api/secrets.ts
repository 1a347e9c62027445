import { useQuery } from "@tanstack/react-query";
import { api, ok } from "./client";

export const secretsKey = ["secrets"];

/** The account's secrets (names and dates): one query, so every page that lists them shares its cache. */
export function useSecrets() {
  return useQuery({ queryKey: secretsKey, queryFn: async () => (await ok(api.GET("/secrets"))).items });
}
