import { fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { CaptureDetail, CaptureSummary, NoteForm, NoteView } from "../../platform";
import { captureStore, joinedAs, notJoined } from "../../test/fixtures";
import { mockCommands, renderWithClient } from "../../test/render";
import { CaptureDetailPane } from "../webhooks/CaptureDetailPane";
import { Inspector } from "../webhooks/Inspector";
import { Notes } from "./Notes";

function note(id: number, author: string, text: string): NoteView {
  return { id, kind: "transaction", targetId: "t-1", author, at: `2026-12-06T20:0${id}:00Z`, text };
}

/** The workspace's notes on one target, kept as the server keeps them (oldest first). */
function noteStore(initial: NoteView[], author: string) {
  const notes = [...initial];
  return {
    notes: () => notes,
    add_note: (a: Record<string, unknown>) => {
      const form = a.form as NoteForm;
      const added = { id: notes.length + 1, kind: form.kind, targetId: form.targetId, author, at: "2026-12-06T20:09:00Z", text: form.text.trim() };
      notes.push(added);
      return added;
    },
  };
}

describe("notes", () => {
  it("are not shown when no team workspace is joined, and nothing is asked of one", async () => {
    const calls = mockCommands({ workspace_status: () => notJoined });
    renderWithClient(<Notes kind="transaction" targetId="t-1" />);
    await waitFor(() => expect(calls.some((c) => c.cmd === "workspace_status")).toBe(true));
    expect(screen.queryByRole("region", { name: "Notes" })).toBeNull();
    expect(calls.some((c) => c.cmd === "notes")).toBe(false);
  });

  it("list the team's notes with author and time, and add one as the member", async () => {
    const store = noteStore([note(1, "vera", "Lender says the loan was withdrawn.")], "sam");
    const calls = mockCommands({ workspace_status: () => joinedAs("sam", "support"), ...store });
    renderWithClient(<Notes kind="transaction" targetId="t-1" />);
    const first = await screen.findByTestId("note");
    expect(first).toHaveTextContent("vera");
    expect(first).toHaveTextContent("Lender says the loan was withdrawn.");
    expect(first).toHaveTextContent("2026-12-06 20:01:00Z");
    const add = screen.getByRole("button", { name: "Add" });
    expect(add).toBeDisabled();
    fireEvent.change(screen.getByLabelText("New note"), { target: { value: "  Answered them, closing.  " } });
    fireEvent.click(add);
    await waitFor(() => expect(screen.getAllByTestId("note")).toHaveLength(2));
    expect(screen.getAllByTestId("note")[1]).toHaveTextContent("sam");
    expect(screen.getAllByTestId("note")[1]).toHaveTextContent("Answered them, closing.");
    expect(screen.getByLabelText("New note")).toHaveValue("");
    expect(calls.find((c) => c.cmd === "add_note")?.args).toEqual({ form: { kind: "transaction", targetId: "t-1", text: "  Answered them, closing.  " } });
    expect(calls.find((c) => c.cmd === "notes")?.args).toEqual({ kind: "transaction", targetId: "t-1" });
  });

  it("are read-only for a viewer, who is told why beside the disabled Add", async () => {
    const calls = mockCommands({ workspace_status: () => joinedAs("vera", "viewer"), ...noteStore([], "vera") });
    renderWithClient(<Notes kind="capture" targetId="7" />);
    expect(await screen.findByTestId("note-refused")).toHaveTextContent("A viewer may not write notes: support and up may.");
    expect(screen.getByLabelText("New note")).toBeDisabled();
    expect(screen.getByRole("button", { name: "Add" })).toBeDisabled();
    expect(await screen.findByText(/No notes yet/)).toBeInTheDocument();
    expect(calls.some((c) => c.cmd === "add_note")).toBe(false);
  });

  it("show the workspace's refusal when a write fails", async () => {
    mockCommands({
      workspace_status: () => joinedAs("sam", "support"),
      notes: () => [],
      add_note: () => {
        throw { kind: "refused", message: "A support member may not write notes: the role changed.", hint: "Ask an admin of the workspace.", status: 403, errorCode: null };
      },
    });
    renderWithClient(<Notes kind="capture" targetId="7" />);
    fireEvent.change(await screen.findByLabelText("New note"), { target: { value: "seen twice" } });
    fireEvent.click(screen.getByRole("button", { name: "Add" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("the role changed");
  });
});

function capture(id: number): CaptureSummary {
  return { id, receivedAt: new Date(1_700_000_000_000 + id * 1000).toISOString(), verdict: "valid", eventType: "created", resourceType: "urn:svc:partner:transaction", resourceId: `tx-${id}`, instanceId: "demo", eventId: `e-${id}`, subscriptionId: "s", attempts: 1, replayed: false, groupAttempts: 1 };
}

const detail: CaptureDetail = {
  summary: capture(7),
  headers: [],
  rawBody: "{}",
  prettyBody: "{}",
  resourceRef: null,
  departures: [],
  attempts: [capture(7)],
  answeredStatus: 200,
  outbound: [],
  open: { kind: "refused", reason: "Not offered: the notification has no resourceRef." },
};

describe("a team workspace's captures", () => {
  it("cannot be cleared by a support member: both buttons disabled, with why", async () => {
    const store = captureStore([capture(2), capture(1)]);
    const calls = mockCommands({ ...store.handlers, workspace_status: () => joinedAs("sam", "support") });
    renderWithClient(<Inspector />);
    expect(await screen.findByTestId("clear-refused")).toHaveTextContent("A support member may not clear captures: developer and up may.");
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("2 of 2"));
    expect(screen.getByTestId("clear-all")).toBeDisabled();
    expect(screen.getByTestId("clear-shown")).toBeDisabled();
    expect(calls.some((c) => c.cmd === "clear_captures")).toBe(false);
    // The tools of this machine's own store are not offered over the workspace's captures.
    expect(screen.queryByLabelText("Capture export")).toBeNull();
  });

  it("can be cleared by a developer, for the whole team", async () => {
    const store = captureStore([capture(2), capture(1)]);
    mockCommands({ ...store.handlers, workspace_status: () => joinedAs("dev", "developer") });
    renderWithClient(<Inspector />);
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("2 of 2"));
    await waitFor(() => expect(screen.getByTestId("clear-all")).toBeEnabled());
    expect(screen.queryByTestId("clear-refused")).toBeNull();
    fireEvent.click(screen.getByTestId("clear-all"));
    expect(await screen.findByTestId("clear-confirm")).toHaveTextContent("from the team workspace?");
  });

  it("cannot be replayed or bundled by a viewer, who is told why; the notes tab replaces the local tools", async () => {
    const calls = mockCommands({ workspace_status: () => joinedAs("vera", "viewer"), capture_detail: () => detail, notes: () => [] });
    renderWithClient(<CaptureDetailPane id={7} onSelect={() => {}} />);
    await screen.findByRole("tab", { name: "notes" });
    expect(screen.queryByRole("tab", { name: "signature" })).toBeNull();
    fireEvent.click(screen.getByRole("tab", { name: "replay" }));
    expect(screen.getByTestId("replay-refused")).toHaveTextContent("A viewer may not replay captures: developer and up may.");
    expect(screen.getByRole("button", { name: "Replay unchanged" })).toBeDisabled();
    expect(screen.getByLabelText("To the workspace's webhook endpoint")).toBeChecked();
    fireEvent.click(screen.getByRole("tab", { name: "evidence" }));
    expect(screen.getByTestId("evidence-save")).toBeDisabled();
    expect(screen.getByTestId("evidence-refused")).toHaveTextContent("A viewer may not export evidence");
    fireEvent.click(screen.getByRole("tab", { name: "notes" }));
    expect(await screen.findByTestId("note-refused")).toBeInTheDocument();
    expect(calls.find((c) => c.cmd === "notes")?.args).toEqual({ kind: "capture", targetId: "7" });
    expect(calls.some((c) => c.cmd === "replay_capture")).toBe(false);
  });

  it("replay for a developer to the workspace's own endpoint", async () => {
    const calls = mockCommands({
      workspace_status: () => joinedAs("dev", "developer"),
      capture_detail: () => detail,
      replay_capture: () => ({ answer: { kind: "replay", url: "https://team.example/webhooks", sentAt: new Date().toISOString(), status: 200, responseHeaders: [], responseBody: null, elapsedMs: 9, error: null }, verdict: null }),
    });
    renderWithClient(<CaptureDetailPane id={7} onSelect={() => {}} />);
    fireEvent.click(await screen.findByRole("tab", { name: "replay" }));
    await waitFor(() => expect(screen.getByLabelText("To the workspace's webhook endpoint")).toBeInTheDocument());
    fireEvent.click(screen.getByRole("button", { name: "Replay unchanged" }));
    expect(await screen.findByTestId("replay-answer")).toHaveTextContent("The workspace answered 200 in 9 ms.");
    expect(calls.find((c) => c.cmd === "replay_capture")?.args).toEqual({ form: { captureId: 7, body: null, target: null } });
  });
});
