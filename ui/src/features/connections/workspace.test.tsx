import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { mockCommands, renderWithClient } from "../../test/render";
import { readyStatus, transaction } from "../../test/fixtures";
import type { SupportIndexView, WorkspacePermission, WorkspaceView } from "../../platform";
import { TeamWorkspace } from "./TeamWorkspace";
import { EMPTY_JOIN, joinProblems, notJoinedText, reachabilityText, teamBadge } from "./workspaceModel";
import { TeamBadge } from "../../shell/TopBarStatus";
import { SupportScreen } from "../support/SupportScreen";
import { TransactionDetail } from "../transactions/TransactionDetail";

const URL = "https://team.example";
const VIEWER_RESPOND = "A viewer may not answer transactions: support and up may. Ask an admin of the workspace.";
const VIEWER_SYNC = "A viewer may not sync the support index: support and up may. Ask an admin of the workspace.";

const permission = (action: string, label: string, whyNot: string | null): WorkspacePermission => ({ action, label, allowed: whyNot === null, whyNot });

function notJoined(patch: Partial<WorkspaceView> = {}): WorkspaceView {
  return {
    joined: false,
    url: null,
    member: null,
    role: null,
    fromEnvironment: false,
    reachable: false,
    lastError: null,
    checkedAt: null,
    permissions: [],
    tokenStore: "the Secret Service",
    ...patch,
  };
}

function viewer(patch: Partial<WorkspaceView> = {}): WorkspaceView {
  return notJoined({
    joined: true,
    url: URL,
    member: "vera",
    role: "viewer",
    reachable: true,
    checkedAt: "2026-03-04T05:06:07Z",
    permissions: [permission("respond", "answer transactions", VIEWER_RESPOND), permission("sync-index", "sync the support index", VIEWER_SYNC)],
    ...patch,
  });
}

describe("the team workspace's words", () => {
  it("checks the join form before anything is sent", () => {
    expect(joinProblems(EMPTY_JOIN)).toEqual({
      url: "The workspace's URL, where its “partner server run” listens.",
      token: "Your personal token: an admin makes one with “partner server member add”.",
    });
    expect(joinProblems({ url: "team.example", token: "pcw_x" }).url).toBe("An http:// or https:// URL, e.g. https://team.example.");
    expect(joinProblems({ url: " https://team.example ", token: "pcw_x" })).toEqual({});
  });

  it("badges a joined workspace only, and says where one not joined stands", () => {
    expect(teamBadge(undefined)).toBeNull();
    expect(teamBadge(notJoined())).toBeNull();
    expect(teamBadge(viewer())).toBe("Team: vera (viewer)");
    expect(reachabilityText(viewer({ reachable: false, lastError: "connection refused" }))).toBe("not reachable: connection refused");
    expect(notJoinedText(viewer())).toBeNull();
    expect(notJoinedText(notJoined())).toBeNull();
    expect(notJoinedText(notJoined({ url: URL, lastError: "the workspace refused the token" }))).toBe(
      "https://team.example is not joined (the workspace refused the token): the app works on this machine's own store.",
    );
  });
});

describe("Team workspace on the Connections screen", () => {
  it("joins with the URL and a password-field token, then shows the member, role and reachability", async () => {
    let joined = false;
    const calls = mockCommands({
      workspace_status: () => (joined ? viewer() : notJoined()),
      join_workspace: () => {
        joined = true;
        return viewer();
      },
    });
    renderWithClient(<TeamWorkspace />);
    const section = await screen.findByRole("region", { name: "Team workspace" });
    fireEvent.click(within(section).getByRole("button", { name: "Join" }));
    expect(await within(section).findByText("The workspace's URL, where its “partner server run” listens.")).toBeInTheDocument();
    expect(calls.some((c) => c.cmd === "join_workspace")).toBe(false);

    const token = within(section).getByTestId("team-token-input");
    expect(token).toHaveAttribute("type", "password");
    fireEvent.change(within(section).getByTestId("team-url-input"), { target: { value: ` ${URL} ` } });
    fireEvent.change(token, { target: { value: "pcw_secret" } });
    fireEvent.click(within(section).getByRole("button", { name: "Join" }));
    expect(await within(section).findByTestId("team-member")).toHaveTextContent("vera");
    expect(within(section).getByTestId("team-role")).toHaveTextContent("viewer");
    expect(within(section).getByTestId("team-url")).toHaveTextContent(URL);
    expect(within(section).getByTestId("team-reachability")).toHaveTextContent("reachable");
    expect(within(section).getByTestId("team-may-not")).toHaveTextContent("answer transactions, sync the support index");
    expect(calls.find((c) => c.cmd === "join_workspace")?.args).toEqual({ form: { url: URL, token: "pcw_secret" } });
    expect(section).not.toHaveTextContent("pcw_secret");
  });

  it("shows a refused join and clears the token it was given", async () => {
    mockCommands({
      workspace_status: () => notJoined(),
      join_workspace: () => {
        throw { kind: "server", message: "The workspace knows no member with this token.", hint: "Ask an admin for a new one.", status: 401, errorCode: null };
      },
    });
    renderWithClient(<TeamWorkspace />);
    const section = await screen.findByRole("region", { name: "Team workspace" });
    fireEvent.change(within(section).getByTestId("team-url-input"), { target: { value: URL } });
    fireEvent.change(within(section).getByTestId("team-token-input"), { target: { value: "pcw_wrong" } });
    fireEvent.click(within(section).getByRole("button", { name: "Join" }));
    expect(await within(section).findByText("The workspace knows no member with this token.")).toBeInTheDocument();
    expect(within(section).getByTestId("team-token-input")).toHaveValue("");
  });

  it("says why a saved workspace is not joined, and leaves a joined one", async () => {
    let left = false;
    const calls = mockCommands({
      workspace_status: () => (left ? notJoined({ url: URL, lastError: "connection refused" }) : viewer()),
      leave_workspace: () => {
        left = true;
        return notJoined({ url: URL, lastError: "connection refused" });
      },
    });
    renderWithClient(<TeamWorkspace />);
    fireEvent.click(await screen.findByTestId("team-leave"));
    expect(await screen.findByTestId("team-not-joined")).toHaveTextContent("https://team.example is not joined (connection refused)");
    expect(calls.filter((c) => c.cmd === "leave_workspace")).toHaveLength(1);
    expect(screen.getByRole("button", { name: "Join" })).toBeInTheDocument();
  });
});

describe("the header's team badge", () => {
  it("names the member and role while joined, and nothing otherwise", async () => {
    mockCommands({ workspace_status: () => viewer() });
    const { unmount } = renderWithClient(<TeamBadge />);
    expect(await screen.findByTestId("team-badge")).toHaveTextContent("Team: vera (viewer)");
    unmount();
    mockCommands({ workspace_status: () => notJoined() });
    renderWithClient(<TeamBadge />);
    await waitFor(() => expect(screen.queryByTestId("team-badge")).toBeNull());
  });
});

const teamIndex = (): SupportIndexView => ({
  exists: true,
  asOf: "2026-03-04T05:06:07Z",
  filled: true,
  fillPosition: 30,
  fillTotal: 30,
  transactions: 30,
  products: 2,
  production: false,
  connectionLabel: `the team workspace ${URL}`,
  path: URL,
  workspace: URL,
});

describe("the support desk joined to a workspace", () => {
  it("says where the answers come from and disables Sync for a viewer, with why as text", async () => {
    const calls = mockCommands({
      workspace_status: () => viewer(),
      support_index: () => teamIndex(),
      support_find: () => ({ total: 0, offset: 0, items: [], asOf: null }),
      support_counts: () => ({ total: 0, byStatus: [], byProduct: [], asOf: null }),
    });
    renderWithClient(<SupportScreen />);
    expect(await screen.findByTestId("support-workspace")).toHaveTextContent(`Answers come from the team workspace ${URL}`);
    expect(await screen.findByTestId("support-sync-refused")).toHaveTextContent(VIEWER_SYNC);
    expect(screen.getByTestId("support-sync")).toBeDisabled();
    expect(screen.getByTestId("support-sync")).toHaveTextContent("Sync the team's index");
    expect(screen.queryByRole("button", { name: "Forget this connection's data" })).toBeNull();
    fireEvent.click(screen.getByTestId("support-sync"));
    expect(calls.some((c) => c.cmd === "support_sync")).toBe(false);
  });

  it("lets a role that may sync do so", async () => {
    mockCommands({
      workspace_status: () => viewer({ role: "support", permissions: [permission("respond", "answer transactions", null), permission("sync-index", "sync the support index", null)] }),
      support_index: () => teamIndex(),
      support_find: () => ({ total: 0, offset: 0, items: [], asOf: null }),
      support_counts: () => ({ total: 0, byStatus: [], byProduct: [], asOf: null }),
    });
    renderWithClient(<SupportScreen />);
    await screen.findByTestId("support-workspace");
    await waitFor(() => expect(screen.getByTestId("support-sync")).toBeEnabled());
    expect(screen.queryByTestId("support-sync-refused")).toBeNull();
  });

  it("disables Send response for a viewer, with why as text", async () => {
    const calls = mockCommands({
      app_status: () => readyStatus(),
      workspace_status: () => viewer(),
      get_transaction: () => transaction(1),
      transaction_events: () => [],
      transaction_notifications: () => ({ transactionId: "t-1", notifications: [], deliveriesNote: null, capturesNote: null, capturesCapped: false }),
    });
    renderWithClient(<TransactionDetail id="t-1" />);
    expect(await screen.findByTestId("respond-refused")).toHaveTextContent(VIEWER_RESPOND);
    const send = screen.getByRole("button", { name: "Send response" });
    expect(send).toBeDisabled();
    fireEvent.submit(screen.getByRole("form", { name: "Respond" }));
    expect(calls.some((c) => c.cmd === "respond_transaction")).toBe(false);
  });
});
