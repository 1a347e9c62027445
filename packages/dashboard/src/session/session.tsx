import { Loader } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from "react";
import { Navigate, Outlet, useLocation } from "react-router";
import { ApiError, api, ok, onUnauthenticated } from "../api/client";
import type { Account } from "../api/types";
import { SessionExpiredModal } from "./session-expired-modal";

interface SessionValue {
  /** The logged-in account; undefined while it is being asked for, null when nobody is logged in. */
  account: Account | null | undefined;
  /** Bumped at every log-in, so streams that a lapsed session ended open again. */
  generation: number;
  loggedIn(account: Account): void;
  logout(): Promise<void>;
}

const SessionContext = createContext<SessionValue | undefined>(undefined);
const meKey = ["me"];

/** Who is logged in (GET /auth/me), and what happens when that session lapses. */
export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [expired, setExpired] = useState(false);
  const [generation, setGeneration] = useState(0);
  const me = useQuery({
    queryKey: meKey,
    queryFn: async () => {
      try {
        return await ok(api.GET("/auth/me"));
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) return null;
        throw error;
      }
    },
    retry: false,
    staleTime: Number.POSITIVE_INFINITY,
  });
  const account = me.data;

  // A call refused for want of a session while someone was logged in: the session lapsed. The
  // page stays as it is under a log-in dialog, so nothing typed or shown is lost.
  useEffect(
    () => onUnauthenticated(() => setExpired(Boolean(queryClient.getQueryData(meKey)))),
    [queryClient],
  );

  const loggedIn = useCallback(
    (next: Account) => {
      queryClient.setQueryData(meKey, next);
      setExpired(false);
      setGeneration((value) => value + 1);
      void queryClient.invalidateQueries({ predicate: (query) => query.queryKey[0] !== meKey[0] });
    },
    [queryClient],
  );

  const logout = useCallback(async () => {
    await ok(api.POST("/auth/logout")).catch(() => undefined); // an expired session is logged out already
    // The "me" query stays in the cache (SessionProvider observes it) and is set to nobody; the
    // account's other data goes. clear() would drop the observed query and leave the page logged in.
    queryClient.setQueryData(meKey, null);
    queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== meKey[0] });
    setExpired(false);
  }, [queryClient]);

  const value = useMemo(
    () => ({ account, generation, loggedIn, logout }),
    [account, generation, loggedIn, logout],
  );
  return (
    <SessionContext.Provider value={value}>
      {children}
      {account && (
        <SessionExpiredModal opened={expired} email={account.email} loggedIn={loggedIn} logout={logout} />
      )}
    </SessionContext.Provider>
  );
}

export function useSession(): SessionValue {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside SessionProvider");
  return session;
}

/** The logged-in account, for pages under RequireSession. */
export function useAccount(): Account {
  const { account } = useSession();
  if (!account) throw new Error("useAccount outside RequireSession");
  return account;
}

/** Routes for logged-in accounts: anyone else is sent to log in, and brought back after. */
export function RequireSession() {
  const { account } = useSession();
  const location = useLocation();
  if (account === undefined) return <Loader aria-label="Loading" m="xl" />;
  if (account === null) return <Navigate to="/login" replace state={{ from: location }} />;
  return <Outlet />;
}
