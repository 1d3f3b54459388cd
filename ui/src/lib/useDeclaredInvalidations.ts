/**
 * The invalidations the commands declare, applied: each successful call's stale query keys
 * (from the core's list, through `platform`'s `onStale`) are invalidated in React Query. Mounted
 * once under the query client (in `App`, and by the tests' `renderWithClient`), so no screen
 * invalidates after a command by hand; `setQueryData` stays where a screen writes an answer it
 * already has.
 */
import { useEffect } from "react";
import { useQueryClient } from "@tanstack/react-query";
import { onStale } from "../platform";

export function useDeclaredInvalidations(): void {
  const client = useQueryClient();
  useEffect(
    () =>
      onStale((keys) => {
        for (const key of keys) void client.invalidateQueries({ queryKey: [...key] });
      }),
    [client],
  );
}
