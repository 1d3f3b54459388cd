import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { App } from "../App";
import { emit } from "@tauri-apps/api/event";
import type { GoToTarget, SupportIndexView, SupportSyncResult } from "../platform";
import { mockCommands, renderWithClient } from "../test/render";
import { pageOf, product, readyStatus, transaction } from "../test/fixtures";
import { GoToBox } from "./GoToBox";
import { CommandPalette } from "./CommandPalette";
import { TransactionDetail } from "../features/transactions/TransactionDetail";
import { ProductDetail } from "../features/products/ProductDetail";

/** `go_to` answering from a table of what exists on the "connection". */
function goToHandler(text: unknown): GoToTarget {
  switch (text) {
    case "t-1":
      return { kind: "transaction", transactionId: "t-1", eventId: null };
    case "e-9":
    case "https://svc.example/partner/v2/transactions/t-2":
      return { kind: "transaction", transactionId: "t-2", eventId: text === "e-9" ? "e-9" : null };
    case "p-3":
      return { kind: "product", productId: "p-3" };
    default:
      return { kind: "notFound", message: `Nothing on Acme UAT is called ${String(text)}.` };
  }
}

function goTo(text: string) {
  const input = screen.getByRole("textbox", { name: "Go to" });
  fireEvent.change(input, { target: { value: text } });
  fireEvent.submit(input);
}

describe("Go to", () => {
  it("opens a transaction, an event within its transaction, a resourceRef and a product", async () => {
    const calls = mockCommands({ go_to: (a) => goToHandler(a.text) });
    renderWithClient(<GoToBox />);
    goTo(" t-1 ");
    await waitFor(() => expect(window.location.hash).toBe("#/transactions/t-1"));
    expect(calls.find((c) => c.cmd === "go_to")?.args).toEqual({ text: "t-1" });
    goTo("e-9");
    await waitFor(() => expect(window.location.hash).toBe("#/transactions/t-2/events/e-9"));
    goTo("https://svc.example/partner/v2/transactions/t-2");
    await waitFor(() => expect(window.location.hash).toBe("#/transactions/t-2"));
    goTo("p-3");
    await waitFor(() => expect(window.location.hash).toBe("#/products/p-3"));
    // Cleared after it went.
    expect(screen.getByRole("textbox", { name: "Go to" })).toHaveValue("");
  });

  it("says why nothing was opened and stays where it was", async () => {
    window.location.hash = "#/webhooks";
    mockCommands({
      go_to: (a) => {
        if (a.text === "boom") throw { kind: "notConnected", message: "No connection is active.", hint: "Pick one in Connections.", status: null, errorCode: null };
        return goToHandler(a.text);
      },
    });
    renderWithClient(<GoToBox />);
    goTo("zzz");
    expect(await screen.findByTestId("goto-message")).toHaveTextContent("Nothing on Acme UAT is called zzz.");
    expect(window.location.hash).toBe("#/webhooks");
    expect(screen.getByRole("textbox", { name: "Go to" })).toHaveValue("zzz");
    goTo("boom");
    await waitFor(() => expect(screen.getByTestId("goto-message")).toHaveTextContent("No connection is active. Pick one in Connections."));
    // Opening something else drops the old answer.
    window.location.hash = "#/products";
    window.dispatchEvent(new HashChangeEvent("hashchange"));
    await waitFor(() => expect(screen.queryByTestId("goto-message")).toBeNull());
  });
});

describe("Command palette", () => {
  const open = () => fireEvent.keyDown(window, { key: "k", ctrlKey: true });

  it("opens on Ctrl+K as a labelled modal, goes to the typed id on Enter and closes", async () => {
    const calls = mockCommands({ go_to: (a) => goToHandler(a.text) });
    renderWithClient(<CommandPalette />);
    expect(screen.queryByRole("dialog")).toBeNull();
    open();
    const dialog = screen.getByRole("dialog", { name: "Go to or run" });
    expect(dialog).toHaveAttribute("aria-modal", "true");
    const input = within(dialog).getByRole("combobox", { name: "Command" });
    expect(input).toHaveFocus();
    fireEvent.change(input, { target: { value: "e-9" } });
    const options = within(dialog).getAllByRole("option");
    expect(options[0]).toHaveTextContent("Go to e-9");
    expect(options[0]).toHaveAttribute("aria-selected", "true");
    // Tab does not leave the dialog.
    fireEvent.keyDown(input, { key: "Tab" });
    expect(input).toHaveFocus();
    fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() => expect(window.location.hash).toBe("#/transactions/t-2/events/e-9"));
    expect(calls.find((c) => c.cmd === "go_to")?.args).toEqual({ text: "e-9" });
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
  });

  it("keeps the palette open with the message when the id names nothing, and Escape closes it", async () => {
    mockCommands({ go_to: (a) => goToHandler(a.text) });
    renderWithClient(<CommandPalette />);
    open();
    const input = screen.getByRole("combobox", { name: "Command" });
    fireEvent.change(input, { target: { value: "nope" } });
    fireEvent.keyDown(input, { key: "Enter" });
    expect(await screen.findByTestId("palette-message")).toHaveTextContent("Nothing on Acme UAT is called nope.");
    expect(screen.getByRole("dialog")).toBeInTheDocument();
    fireEvent.keyDown(input, { key: "Escape" });
    expect(screen.queryByRole("dialog")).toBeNull();
  });

  it("moves through the screens with the arrow keys and opens the chosen one", () => {
    mockCommands({});
    renderWithClient(<CommandPalette />);
    open();
    const input = screen.getByRole("combobox", { name: "Command" });
    // No text: the screens first (Products, Transactions, …), Up wraps to the sync.
    fireEvent.keyDown(input, { key: "ArrowDown" });
    expect(screen.getAllByRole("option")[1]).toHaveAttribute("aria-selected", "true");
    expect(input).toHaveAttribute("aria-activedescendant", screen.getAllByRole("option")[1]?.id ?? "");
    fireEvent.keyDown(input, { key: "Enter" });
    expect(window.location.hash).toBe("#/transactions");
    expect(screen.queryByRole("dialog")).toBeNull();
    open();
    fireEvent.change(screen.getByRole("combobox", { name: "Command" }), { target: { value: "Supp" } });
    fireEvent.keyDown(screen.getByRole("combobox", { name: "Command" }), { key: "ArrowDown" });
    fireEvent.keyDown(screen.getByRole("combobox", { name: "Command" }), { key: "Enter" });
    expect(window.location.hash).toBe("#/support");
  });
});

describe("The app's shell: Support, Go to and Ctrl+K", () => {
  it("lists Support under Alt+7; the palette's sync runs on, with its progress, while other screens are open", async () => {
    let finish: (r: SupportSyncResult) => void = () => {};
    const index = (patch: Partial<SupportIndexView>): SupportIndexView => ({ exists: false, asOf: null, filled: false, fillPosition: 0, fillTotal: null, transactions: 0, products: 0, production: false, connectionLabel: "Embedded sandbox", path: "/x/sandbox.db", ...patch });
    const calls = mockCommands({
      app_status: () => readyStatus(),
      sort_keys: () => ({ products: ["listingName"], transactions: ["id"], known: true, triedProducts: [], triedTransactions: [] }),
      list_products: (a) => pageOf([product(1)], a, 1),
      support_index: () => index({}),
      support_find: () => ({ total: 0, offset: 0, items: [], asOf: "2026-03-04T05:06:07Z" }),
      support_counts: () => ({ total: 0, byStatus: [], byProduct: [], asOf: "2026-03-04T05:06:07Z" }),
      support_sync: async (a) => {
        await emit("support-sync-progress", { jobId: (a.form as { jobId: string }).jobId, phase: "fill", done: 500, total: 5000 });
        return new Promise<SupportSyncResult>((resolve) => (finish = resolve));
      },
      cancel_job: () => null,
    });
    render(<QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}><App /></QueryClientProvider>);
    const link = await screen.findByRole("link", { name: /Support/ });
    expect(link).toHaveTextContent("Alt+7");
    expect(await screen.findByRole("textbox", { name: "Go to" })).toBeInTheDocument();
    fireEvent.keyDown(window, { key: "7", code: "Digit7", altKey: true });
    expect(await screen.findByTestId("support-summary")).toHaveTextContent("No local copy yet");
    fireEvent.keyDown(window, { key: "k", ctrlKey: true });
    const input = screen.getByRole("combobox", { name: "Command" });
    fireEvent.change(input, { target: { value: "sync" } });
    fireEvent.keyDown(input, { key: "ArrowDown" });
    fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() => expect(screen.getByTestId("sync-progress")).toHaveTextContent("fill 500 of 5,000"));
    const jobId = (calls.find((c) => c.cmd === "support_sync")?.args.form as { jobId: string; allowProduction: boolean });
    expect(jobId.allowProduction).toBe(false);
    // Away to Products and back: the same sync, not a new one, with its Cancel.
    fireEvent.keyDown(window, { key: "1", code: "Digit1", altKey: true });
    await screen.findAllByText("Product 1");
    fireEvent.keyDown(window, { key: "7", code: "Digit7", altKey: true });
    expect(await screen.findByTestId("sync-progress")).toHaveTextContent("fill 500 of 5,000");
    fireEvent.click(within(screen.getByTestId("sync-progress")).getByRole("button", { name: "Cancel" }));
    await waitFor(() => expect(calls.find((c) => c.cmd === "cancel_job")?.args).toEqual({ jobId: jobId.jobId }));
    expect(calls.filter((c) => c.cmd === "support_sync")).toHaveLength(1);
    finish({ cancelled: true, filled: 500, created: 500, updated: 0, fallbacks: [], index: index({ exists: true, asOf: "2026-03-04T05:06:07Z", transactions: 500, fillPosition: 500, fillTotal: 5000 }) });
    expect(await screen.findByTestId("sync-result")).toHaveTextContent("Stopped: the 500 transactions stored so far stay");
    expect(screen.getByRole("button", { name: "Continue the copy" })).toBeInTheDocument();
  });
});

describe("Copy link", () => {
  const writeText = vi.fn<(text: string) => Promise<void>>();
  afterEach(() => writeText.mockReset());
  const stubClipboard = () => {
    writeText.mockResolvedValue(undefined);
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
  };

  it("copies the transaction's link, with the marked event", async () => {
    stubClipboard();
    Element.prototype.scrollIntoView = () => {};
    const calls = mockCommands({
      get_transaction: () => transaction(1),
      transaction_events: () => [],
      resource_link: (a) => `partner-console://open/acme/${String(a.screen)}/${String(a.id)}${a.eventId ? `/events/${String(a.eventId)}` : ""}`,
    });
    renderWithClient(<TransactionDetail id="t-1" eventId="e-5" />);
    fireEvent.click(await screen.findByRole("button", { name: "Copy link" }));
    expect(await screen.findByText("Link copied")).toBeInTheDocument();
    expect(calls.find((c) => c.cmd === "resource_link")?.args).toEqual({ screen: "transactions", id: "t-1", eventId: "e-5" });
    expect(writeText).toHaveBeenCalledWith("partner-console://open/acme/transactions/t-1/events/e-5");
  });

  it("copies the product's link, and says why when the link could not be made", async () => {
    stubClipboard();
    let fail = false;
    const calls = mockCommands({
      get_product: () => product(3),
      subscription_keys: (a) => ({ subscriptionId: a.subscriptionId, hasCurrent: true, hasPrevious: false }),
      resource_link: (a) => {
        if (fail) throw { kind: "notConnected", message: "No connection is active.", hint: "Pick one.", status: null, errorCode: null };
        return `partner-console://open/acme/products/${String(a.id)}`;
      },
    });
    renderWithClient(<ProductDetail id="p-3" />);
    fireEvent.click(await screen.findByRole("button", { name: "Copy link" }));
    expect(await screen.findByText("Link copied")).toBeInTheDocument();
    expect(calls.find((c) => c.cmd === "resource_link")?.args).toEqual({ screen: "products", id: "p-3", eventId: null });
    expect(writeText).toHaveBeenCalledWith("partner-console://open/acme/products/p-3");
    fail = true;
    fireEvent.click(screen.getByRole("button", { name: "Copy link" }));
    expect(await screen.findByText("No connection is active.")).toBeInTheDocument();
    expect(writeText).toHaveBeenCalledTimes(1);
  });
});
