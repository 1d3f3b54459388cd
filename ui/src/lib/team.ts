/**
 * The team workspace as the screens that act on it read it: whether the app has joined one, and,
 * for an action the member's role does not allow, the sentence that says why (shown beside the
 * disabled control, from the same rule the workspace's server enforces).
 */
import { useQuery } from "@tanstack/react-query";
import { api, type WorkspaceView } from "../platform";

/** The query key of the workspace's status (joining and leaving make it stale). */
export const WORKSPACE_KEY = ["workspace"] as const;

/** The workspace's status, read once a minute at most (asking it checks the member again). */
export function useTeam() {
  return useQuery({ queryKey: WORKSPACE_KEY, queryFn: api.workspaceStatus, staleTime: 60_000, retry: false });
}

/**
 * Why the member may not take `action` (the audit log's name: `write-note`, `clear`, `replay`,
 * `export-evidence`, …): null when no workspace is joined (the app's own store: nothing is
 * refused) or the role allows it.
 */
export function refusal(view: WorkspaceView | undefined, action: string): string | null {
  if (!view?.joined) return null;
  const permission = view.permissions.find((p) => p.action === action);
  if (!permission || permission.allowed) return null;
  return permission.whyNot ?? `Your role (${view.role ?? "unknown"}) may not ${permission.label}.`;
}

/** What tells one workspace session from another (a join, a leave, another member), for keys. */
export function teamIdentity(view: WorkspaceView | undefined): string {
  return view?.joined ? `${view.url ?? ""} ${view.member ?? ""}` : "this machine";
}
