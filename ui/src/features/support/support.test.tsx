import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { emit } from "@tauri-apps/api/event";
import { describe, expect, it } from "vitest";
import { mockCommands, type Handler } from "../../test/render";
import { renderWithClient } from "../../test/render";
import { storedTransaction } from "../../test/fixtures";
import type { SupportCounts, SupportFilter, SupportIndexView, SupportPage, SupportQuery, SupportSyncResult, Transaction } from "../../platform";
import { SupportScreen } from "./SupportScreen";

const AS_OF = "2026-03-04T05:06:07Z";

function indexView(patch: Partial<SupportIndexView> = {}): SupportIndexView {
  return {
    exists: true,
    asOf: AS_OF,
    filled: true,
    fillPosition: 1234,
    fillTotal: 1234,
    transactions: 1234,
    products: 3,
    production: false,
    connectionLabel: "Acme UAT",
    path: "/home/me/.local/share/partner-console/support/acme.db",
    ...patch,
  };
}

const NO_FILTER: SupportFilter = {
  status: null,
  product: null,
  requestType: null,
  responseStatus: null,
  createdSince: null,
  createdBefore: null,
  updatedSince: null,
  updatedBefore: null,
  partnerStatus: null,
  referenceNumber: null,
  requestingParty: null,
  loan: [],
  text: null,
};

function withLoan(i: number): Transaction {
  const t = storedTransaction(i);
  const kept = { ...t, request: { ...t.request, loan: { loanNumber: `LN-${i}` }, requestingParty: { name: `Lender ${i}`, address: "", city: "", state: "", postalCode: "" } } };
  return { ...kept, document: { ...kept } };
}

/** A page of `total` made-up rows at the query's offset (at most 50 of them, as asked). */
function pageFor(args: Record<string, unknown>, total: number): SupportPage {
  const query = args.query as SupportQuery;
  const count = Math.max(0, Math.min(query.limit, total - query.offset));
  return { total, offset: query.offset, items: Array.from({ length: count }, (_, k) => withLoan(query.offset + k + 1)), asOf: AS_OF };
}

const counts = (): SupportCounts => ({
  total: 120,
  byStatus: [
    { key: "created", label: "created", count: 100 },
    { key: "completed", label: "completed", count: 20 },
  ],
  byProduct: [{ key: "p-7", label: "Flood certs", count: 120 }],
  asOf: AS_OF,
});

function handlers(patch: Record<string, Handler> = {}): Record<string, Handler> {
  return {
    support_index: () => indexView(),
    support_find: (a) => pageFor(a, 120),
    support_counts: () => counts(),
    ...patch,
  };
}

const lastQuery = (calls: Array<{ cmd: string; args: Record<string, unknown> }>) =>
  calls.filter((c) => c.cmd === "support_find").at(-1)?.args.query as SupportQuery | undefined;

describe("Support: syncing the local index", () => {
  it("makes the first copy with its progress, cancels it by job id, and says what was kept", async () => {
    let finish: (r: SupportSyncResult) => void = () => {};
    let jobId = "";
    const calls = mockCommands(
      handlers({
        support_index: () => indexView({ exists: false, asOf: null, transactions: 0, filled: false, fillPosition: 0, fillTotal: null }),
        support_sync: async (a) => {
          const form = a.form as { jobId: string; allowProduction: boolean };
          jobId = form.jobId;
          await emit("support-sync-progress", { jobId: "someone-else", phase: "fill", done: 9, total: 9 });
          await emit("support-sync-progress", { jobId, phase: "fill", done: 1234, total: 100000 });
          return new Promise<SupportSyncResult>((resolve) => (finish = resolve));
        },
        cancel_job: () => null,
      }),
    );
    renderWithClient(<SupportScreen />);
    expect(await screen.findByTestId("support-summary")).toHaveTextContent("No local copy yet");
    fireEvent.click(screen.getByRole("button", { name: "Make a local copy" }));
    await waitFor(() => expect(screen.getByTestId("sync-progress")).toHaveTextContent("fill 1,234 of 100,000"));
    expect(calls.find((c) => c.cmd === "support_sync")?.args.form).toEqual({ jobId, allowProduction: false });
    fireEvent.click(within(screen.getByTestId("sync-progress")).getByRole("button", { name: "Cancel" }));
    await waitFor(() => expect(calls.find((c) => c.cmd === "cancel_job")?.args).toEqual({ jobId }));
    finish({ cancelled: true, filled: 1234, created: 1234, updated: 0, fallbacks: [], index: indexView({ filled: false, fillPosition: 1234, fillTotal: 100000 }) });
    expect(await screen.findByTestId("sync-result")).toHaveTextContent("Stopped: the 1,234 transactions stored so far stay; the next sync continues from there.");
    expect(screen.getByTestId("support-summary")).toHaveTextContent("1,234 transactions · as of 2026-03-04 05:06:07Z · partial: 1,234 of 100,000 read");
    expect(screen.getByRole("button", { name: "Continue the copy" })).toBeInTheDocument();
    // The index now exists: its answers are asked for.
    await waitFor(() => expect(calls.some((c) => c.cmd === "support_find")).toBe(true));
  });

  it("asks before copying a production connection, and sends allowProduction only after yes", async () => {
    const calls = mockCommands(
      handlers({
        support_index: () => indexView({ exists: false, asOf: null, transactions: 0, production: true, connectionLabel: "Acme PROD" }),
        support_sync: () => ({
          cancelled: false,
          filled: 10,
          created: 10,
          updated: 0,
          fallbacks: ["the service does not sort by `updated` (HTTP 400: Unsupported sort key); reading every item instead"],
          index: indexView({ transactions: 10, production: true }),
        }),
      }),
    );
    renderWithClient(<SupportScreen />);
    fireEvent.click(await screen.findByRole("button", { name: "Make a local copy" }));
    const ask = screen.getByRole("alertdialog", { name: "Make a local copy of production data" });
    expect(ask).toHaveTextContent("lenders' and borrowers' data — will be kept on this machine, encrypted, its key in the keychain. Make it?");
    fireEvent.click(within(ask).getByRole("button", { name: "Cancel" }));
    expect(screen.queryByRole("alertdialog")).toBeNull();
    expect(calls.some((c) => c.cmd === "support_sync")).toBe(false);

    fireEvent.click(screen.getByRole("button", { name: "Make a local copy" }));
    fireEvent.click(within(screen.getByRole("alertdialog")).getByRole("button", { name: "Make the copy" }));
    expect(await screen.findByTestId("sync-result")).toHaveTextContent("Synced: 10 read, 10 new, 0 updated · as of 2026-03-04 05:06:07Z.");
    // What the sync did instead of what the service refused stays said beside the result.
    expect(screen.getByTestId("sync-fallback")).toHaveTextContent(
      "During this sync: the service does not sort by `updated` (HTTP 400: Unsupported sort key); reading every item instead.",
    );
    const syncs = calls.filter((c) => c.cmd === "support_sync");
    expect(syncs).toHaveLength(1);
    expect(syncs[0]?.args.form).toMatchObject({ allowProduction: true });
  });

  it("shows the shell's refusal in words when a sync fails", async () => {
    mockCommands(
      handlers({
        support_sync: () => {
          throw { kind: "network", message: "Could not reach https://api.example.test.", hint: "Check the connection.", status: null, errorCode: null };
        },
      }),
    );
    renderWithClient(<SupportScreen />);
    fireEvent.click(await screen.findByRole("button", { name: "Refresh" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Could not reach https://api.example.test.");
  });
});

describe("Support: asking the index", () => {
  it("sends every filter field as the index's SupportFilter, from the first page", async () => {
    const calls = mockCommands(handlers());
    renderWithClient(<SupportScreen />);
    await screen.findByText("LN-1");
    expect(lastQuery(calls)).toEqual({ filter: NO_FILTER, offset: 0, limit: 50 });
    const set = (label: string, value: string) => fireEvent.change(screen.getByLabelText(label), { target: { value } });
    set("Text", " smith ");
    set("Status", "completed");
    set("Product", "Flood certs");
    set("Request type", "NEW_REQUEST");
    set("Response status", "failed");
    set("Created from", "2026-01-02T03:04");
    set("Created before", "2026-01-03T00:00");
    set("Updated from", "2026-02-01T00:00");
    set("Updated before", "2026-02-02T12:30");
    set("Partner status", "Ordered");
    set("Reference number", "R-9");
    set("Requesting party", "Acme Bank");
    fireEvent.click(screen.getByRole("button", { name: "Add loan field" }));
    set("Loan field 1", "loanNumber");
    set("Loan value 1", "LN-42");
    fireEvent.click(screen.getByRole("button", { name: "Add loan field" }));
    fireEvent.click(screen.getByRole("button", { name: "Find" }));
    await waitFor(() =>
      expect(lastQuery(calls)).toEqual({
        filter: {
          status: "completed",
          product: "Flood certs",
          requestType: "NEW_REQUEST",
          responseStatus: "failed",
          createdSince: new Date("2026-01-02T03:04").toISOString(),
          createdBefore: new Date("2026-01-03T00:00").toISOString(),
          updatedSince: new Date("2026-02-01T00:00").toISOString(),
          updatedBefore: new Date("2026-02-02T12:30").toISOString(),
          partnerStatus: "Ordered",
          referenceNumber: "R-9",
          requestingParty: "Acme Bank",
          // The blank second row is left out.
          loan: [{ field: "loanNumber", value: "LN-42" }],
          text: "smith",
        },
        offset: 0,
        limit: 50,
      }),
    );
    // Counts follow the same filter.
    expect(calls.filter((c) => c.cmd === "support_counts").at(-1)?.args.filter).toMatchObject({ status: "completed", text: "smith" });
    // Fifteen fields typed one by one: seconds on a busy 2-core machine, past the default 5 s.
  }, 20_000);

  it("refuses a loan value without a field name before asking", async () => {
    const calls = mockCommands(handlers());
    renderWithClient(<SupportScreen />);
    await screen.findByText("LN-1");
    const before = calls.filter((c) => c.cmd === "support_find").length;
    fireEvent.click(screen.getByRole("button", { name: "Add loan field" }));
    fireEvent.change(screen.getByLabelText("Loan value 1"), { target: { value: "LN-42" } });
    fireEvent.click(screen.getByRole("button", { name: "Find" }));
    expect(await screen.findByText("Loan field 1 has a value but no field name.")).toBeInTheDocument();
    expect(calls.filter((c) => c.cmd === "support_find")).toHaveLength(before);
  });

  it("pages 50 at a time with the range and as-of, and opens a row's transaction", async () => {
    const calls = mockCommands(handlers());
    renderWithClient(<SupportScreen />);
    await screen.findByText("LN-1");
    expect(screen.getByTestId("support-range")).toHaveTextContent("1–50 of 120 · as of 2026-03-04 05:06:07Z");
    expect(screen.getAllByTestId("support-row")).toHaveLength(50);
    expect(screen.getByText("Lender 1")).toBeInTheDocument();
    fireEvent.click(screen.getByRole("button", { name: "Next page" }));
    await waitFor(() => expect(screen.getByTestId("support-range")).toHaveTextContent("51–100 of 120"));
    fireEvent.click(screen.getByRole("button", { name: "Next page" }));
    await waitFor(() => expect(screen.getByTestId("support-range")).toHaveTextContent("101–120 of 120"));
    expect(lastQuery(calls)).toMatchObject({ offset: 100, limit: 50 });
    expect(screen.getByRole("button", { name: "Next page" })).toBeDisabled();
    fireEvent.click(screen.getByText("LN-101"));
    expect(window.location.hash).toBe("#/transactions/t-101");
  });

  it("sets the filter from a count chip, and clears it with a second click", async () => {
    const calls = mockCommands(handlers());
    renderWithClient(<SupportScreen />);
    await screen.findByText("LN-1");
    fireEvent.click(within(screen.getByRole("group", { name: "Product counts" })).getByRole("button", { name: /Flood certs/ }));
    await waitFor(() => expect(lastQuery(calls)?.filter).toEqual({ ...NO_FILTER, product: "p-7" }));
    expect(screen.getByLabelText("Product")).toHaveValue("p-7");
    expect(calls.filter((c) => c.cmd === "support_counts").at(-1)?.args.filter).toEqual({ ...NO_FILTER, product: "p-7" });
    const completed = within(screen.getByRole("group", { name: "Status counts" })).getByRole("button", { name: /completed/ });
    fireEvent.click(completed);
    await waitFor(() => expect(lastQuery(calls)?.filter).toEqual({ ...NO_FILTER, product: "p-7", status: "completed" }));
    expect(completed).toHaveAttribute("aria-pressed", "true");
    expect(screen.getByLabelText("Status")).toHaveValue("completed");
    fireEvent.click(completed);
    // The page for that filter was read already (the second ask is answered from the cache).
    await waitFor(() => expect(completed).toHaveAttribute("aria-pressed", "false"));
    expect(screen.getByLabelText("Status")).toHaveValue("");
  });

  it("exports the filtered set through a save-dialog job", async () => {
    const calls = mockCommands(
      handlers({
        support_export: async (a) => {
          const form = a.form as { jobId: string };
          await emit("job-progress", { jobId: form.jobId, done: 20, total: 20 });
          return { path: "/home/me/completed.json", count: 20, skipped: 0, cancelled: false };
        },
      }),
    );
    renderWithClient(<SupportScreen />);
    await screen.findByText("LN-1");
    fireEvent.change(screen.getByLabelText("Status"), { target: { value: "completed" } });
    fireEvent.click(screen.getByRole("button", { name: "Find" }));
    await waitFor(() => expect(lastQuery(calls)?.filter.status).toBe("completed"));
    fireEvent.change(screen.getByLabelText("Export format"), { target: { value: "json" } });
    fireEvent.click(screen.getByRole("button", { name: "Export filtered…" }));
    expect(await screen.findByTestId("job-result")).toHaveTextContent("20 transactions exported · /home/me/completed.json");
    const form = calls.find((c) => c.cmd === "support_export")?.args.form as { jobId: string; format: string; filter: SupportFilter };
    expect(form.format).toBe("json");
    expect(form.filter).toEqual({ ...NO_FILTER, status: "completed" });
    expect(form.jobId).toMatch(/^support-export-/);
  });

  it("forgets the connection's data only after a confirmation naming what is deleted", async () => {
    const calls = mockCommands(
      handlers({ support_forget: () => indexView({ exists: false, asOf: null, transactions: 0, products: 0 }) }),
    );
    renderWithClient(<SupportScreen />);
    await screen.findByText("LN-1");
    expect(screen.getByText(/encrypted; key in the keychain/)).toBeInTheDocument();
    fireEvent.click(screen.getByRole("button", { name: "Forget this connection's data" }));
    const ask = screen.getByRole("alertdialog", { name: "Forget this connection's data" });
    expect(ask).toHaveTextContent("Deletes the local copy of Acme UAT's data (1,234 transactions and 3 products, /home/me/.local/share/partner-console/support/acme.db) and its key from the keychain.");
    expect(calls.some((c) => c.cmd === "support_forget")).toBe(false);
    fireEvent.click(within(ask).getByRole("button", { name: "Forget" }));
    await waitFor(() => expect(screen.getByTestId("support-summary")).toHaveTextContent("No local copy yet"));
    expect(calls.filter((c) => c.cmd === "support_forget")).toHaveLength(1);
    expect(screen.queryByRole("table", { name: "Support results" })).toBeNull();
    expect(screen.getByRole("button", { name: "Make a local copy" })).toBeInTheDocument();
  });
});
