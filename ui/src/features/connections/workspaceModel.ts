/**
 * The team workspace as the Connections screen and the top bar show it: the join form's checks,
 * the header's badge, and the words for where the workspace stands. Pure: the screen and the
 * shell render these, the tests check them without a DOM.
 */
import type { WorkspaceView } from "../../platform";

/** The join form as typed. */
export interface JoinDraft {
  url: string;
  token: string;
}

export const EMPTY_JOIN: JoinDraft = { url: "", token: "" };

/** What is wrong with the join form, by field (nothing is sent while anything is). */
export function joinProblems(draft: JoinDraft): Partial<Record<keyof JoinDraft, string>> {
  const problems: Partial<Record<keyof JoinDraft, string>> = {};
  const url = draft.url.trim();
  if (url === "") problems.url = "The workspace's URL, where its “partner server run” listens.";
  else if (!/^https?:\/\/[^\s/]+/i.test(url)) problems.url = "An http:// or https:// URL, e.g. https://team.example.";
  if (draft.token.trim() === "") problems.token = "Your personal token: an admin makes one with “partner server member add”.";
  return problems;
}

/** The top bar's badge while joined: `Team: vera (viewer)`; null otherwise. */
export function teamBadge(view: WorkspaceView | undefined): string | null {
  if (!view?.joined) return null;
  return `Team: ${view.member ?? "?"} (${view.role ?? "?"})`;
}

/** Whether the workspace answered when it was last asked, in words. */
export function reachabilityText(view: WorkspaceView): string {
  if (view.reachable) return view.checkedAt ? `reachable (checked ${new Date(view.checkedAt).toLocaleTimeString("en-GB")})` : "reachable";
  return `not reachable: ${view.lastError ?? "it did not answer"}`;
}

/** Where the login comes from and where its token is kept. */
export function sourceText(view: WorkspaceView): string {
  if (view.fromEnvironment) return "named by PARTNER_WORKSPACE, which wins over a saved login at every start";
  return `the token is kept in ${view.tokenStore}; the CLI (“partner workspace”) uses the same login`;
}

/** Why a workspace the app knows of is not joined (unreachable at start, a refused token); null when none is. */
export function notJoinedText(view: WorkspaceView | undefined): string | null {
  if (!view || view.joined || !view.url) return null;
  const why = view.lastError ?? "it did not answer";
  return `${view.url} is not joined (${why}): the app works on this machine's own store.`;
}
