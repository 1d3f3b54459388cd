import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { mockCommands, renderWithClient } from "../../test/render";
import type { AuditEntryView } from "../../platform";
import { AuditScreen } from "./AuditScreen";
import { countText, filterAudit, outcomeClass, workspaceLogText } from "./auditModel";

const entry = (over: Partial<AuditEntryView> = {}): AuditEntryView => ({
  at: "2026-11-27T08:00:00.000Z",
  connection: "Live support",
  baseUrl: "https://api.example.com",
  clientId: "client-1",
  via: "app",
  member: null,
  role: null,
  action: "respond to a transaction",
  target: "transaction t-1",
  call: "PATCH /partner/v2/transactions/t-1/response",
  outcome: "done",
  status: 200,
  requestId: "req-1",
  answer: "200",
  sent: '{\n  "status": "processing"\n}',
  ...over,
});

const TEAM = "https://team.example.com";
const team = (over: Partial<AuditEntryView>): AuditEntryView =>
  entry({ connection: "", baseUrl: TEAM, clientId: "", via: "workspace", call: "", status: null, requestId: null, sent: "", ...over });
const teamNote = team({ member: "sam", role: "support", action: "write-note", target: "transaction t-1", answer: "note 7", at: "2026-11-27T09:00:00.000Z" });
const teamRefused = team({ member: "vera", role: "viewer", action: "clear", target: "captures", outcome: "refused", answer: "" });

const refused = entry({ outcome: "refused", status: null, requestId: null, answer: "refused: the connection is read-only", target: "transaction t-2" });
const failed = entry({ outcome: "failed", status: 409, via: "cli", action: "rotate a signing key", target: "product p-1, subscription s-1", answer: "409 conflict: locked", sent: "" });

describe("audit model", () => {
  it("filters by text and outcome, and counts what is shown of the whole", () => {
    const all = [entry(), refused, failed];
    expect(filterAudit(all, "", "refused")).toEqual([refused]);
    expect(filterAudit(all, "ROTATE", "all")).toEqual([failed]);
    expect(filterAudit(all, "req-1", "all")).toHaveLength(2);
    expect(filterAudit(all, "cli", "failed")).toEqual([failed]);
    expect(outcomeClass("refused")).toBe("warn");
    expect(outcomeClass("failed")).toBe("invalid");
    expect(countText(500, 1203)).toBe("Showing the newest 500 of 1,203 writes");
    expect(countText(1, 1)).toBe("1 write");
    expect(countText(500, 500, true)).toBe("Showing the newest 500 writes; the export has the older ones too");
  });

  it("matches a workspace entry's member and role, and says whose log a workspace's is", () => {
    const all = [entry(), teamNote, teamRefused];
    expect(filterAudit(all, "SAM", "all")).toEqual([teamNote]);
    expect(filterAudit(all, "viewer", "refused")).toEqual([teamRefused]);
    expect(filterAudit(all, "note 7", "all")).toEqual([teamNote]);
    const log = { entries: all, total: 3, older: false, unreadable: 0, unopened: 0, path: TEAM, workspace: TEAM };
    expect(workspaceLogText(log)).toContain(`The team workspace ${TEAM}'s audit log: every member's writes`);
    expect(workspaceLogText({ ...log, workspace: null, path: "/data/audit-log.jsonl" })).toBeNull();
  });
});

describe("Audit log screen", () => {
  it("lists the writes newest first, filters them, opens one and says what the file holds that is not shown", async () => {
    const calls = mockCommands({
      audit_log: () => ({ entries: [entry(), refused, failed], total: 3, older: false, unreadable: 1, unopened: 1, path: "/data/audit-log.jsonl", workspace: null }),
      export_audit_log: () => ({ path: "/exports/audit-log.csv", count: 3, skipped: 0, cancelled: false }),
    });
    renderWithClient(<AuditScreen />);
    await waitFor(() => expect(screen.getAllByTestId("audit-row")).toHaveLength(3));
    expect(screen.getAllByTestId("audit-row").map((r) => r.getAttribute("data-outcome"))).toEqual(["done", "refused", "failed"]);
    expect(screen.getByTestId("audit-count")).toHaveTextContent("3 writes");
    expect(screen.getByTestId("audit-unreadable")).toHaveTextContent("1 line(s)");
    expect(screen.getByTestId("audit-unreadable")).toHaveTextContent("the key may differ");
    expect(screen.getAllByTestId("audit-row")[2]).toHaveTextContent("(CLI)");

    fireEvent.change(screen.getByTestId("audit-outcome"), { target: { value: "refused" } });
    expect(screen.getAllByTestId("audit-row")).toHaveLength(1);
    fireEvent.change(screen.getByTestId("audit-outcome"), { target: { value: "all" } });
    fireEvent.change(screen.getByTestId("audit-filter"), { target: { value: "no such thing" } });
    expect(screen.getByText("No write matches the filter.")).toBeInTheDocument();
    fireEvent.change(screen.getByTestId("audit-filter"), { target: { value: "" } });

    fireEvent.click(within(screen.getAllByTestId("audit-row")[0]!).getByRole("button", { name: "Details" }));
    const details = screen.getByTestId("audit-details");
    expect(details).toHaveTextContent("PATCH /partner/v2/transactions/t-1/response");
    expect(details).toHaveTextContent("req-1");
    expect(within(details).getByTestId("audit-sent")).toHaveTextContent('"status": "processing"');

    fireEvent.click(screen.getByTestId("audit-export-csv"));
    await waitFor(() => expect(screen.getByTestId("job-result")).toHaveTextContent("3 writes exported"));
    expect(calls.some((c) => c.cmd === "export_audit_log" && (c.args as { format: string }).format === "csv")).toBe(true);
  });

  it("joined to a team workspace, says whose log it shows and lists every member's writes with their name and role", async () => {
    const calls = mockCommands({
      audit_log: () => ({ entries: [teamNote, teamRefused], total: 2, older: true, unreadable: 0, unopened: 0, path: TEAM, workspace: TEAM }),
      export_audit_log: () => ({ path: "/exports/workspace-audit-log.jsonl", count: 1203, skipped: 0, cancelled: false }),
    });
    renderWithClient(<AuditScreen />);
    await waitFor(() => expect(screen.getAllByTestId("audit-row")).toHaveLength(2));
    expect(screen.getByTestId("audit-workspace")).toHaveTextContent(`The team workspace ${TEAM}'s audit log: every member's writes`);
    expect(screen.getByTestId("audit-count")).toHaveTextContent("Showing the newest 2 writes; the export has the older ones too");
    expect(screen.queryByTestId("audit-unreadable")).toBeNull();
    expect(screen.getByRole("columnheader", { name: "Member" })).toBeInTheDocument();
    const [note, clear] = screen.getAllByTestId("audit-row");
    expect(note).toHaveTextContent("sam (support)");
    expect(note).toHaveTextContent("write-note");
    expect(note).toHaveTextContent("note 7");
    expect(clear).toHaveTextContent("vera (viewer)");
    expect(clear!.getAttribute("data-outcome")).toBe("refused");

    fireEvent.change(screen.getByTestId("audit-filter"), { target: { value: "vera" } });
    expect(screen.getAllByTestId("audit-row")).toHaveLength(1);
    fireEvent.change(screen.getByTestId("audit-filter"), { target: { value: "" } });

    fireEvent.click(within(screen.getAllByTestId("audit-row")[0]!).getByRole("button", { name: "Details" }));
    const details = screen.getByTestId("audit-details");
    expect(details).toHaveTextContent("sam (support)");
    expect(details).toHaveTextContent(TEAM);
    expect(details).not.toHaveTextContent("Request id");
    expect(within(details).queryByTestId("audit-sent")).toBeNull();

    fireEvent.click(screen.getByTestId("audit-export-jsonl"));
    await waitFor(() => expect(screen.getByTestId("job-result")).toHaveTextContent("1,203 writes exported"));
    expect(calls.some((c) => c.cmd === "export_audit_log" && (c.args as { format: string }).format === "json")).toBe(true);
  });

  it("says there are none yet on an empty log", async () => {
    mockCommands({ audit_log: () => ({ entries: [], total: 0, older: false, unreadable: 0, unopened: 0, path: "/data/audit-log.jsonl", workspace: null }) });
    renderWithClient(<AuditScreen />);
    expect(await screen.findByText(/No writes yet/)).toBeInTheDocument();
  });
});
