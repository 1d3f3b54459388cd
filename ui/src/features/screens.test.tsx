import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { mockCommands, renderWithClient } from "../test/render";
import { captureStore, embeddedConnection, pageOf, product, readyStatus, transaction } from "../test/fixtures";
import { ProductsScreen } from "./products/ProductsScreen";
import { ProductDetail } from "./products/ProductDetail";
import { TransactionDetail } from "./transactions/TransactionDetail";
import { TokenScreen } from "./token/TokenScreen";
import { ConnectionsScreen } from "./connections/ConnectionsScreen";
import { Inspector } from "./webhooks/Inspector";
import { CaptureDetailPane } from "./webhooks/CaptureDetailPane";
import { DemoScreen } from "./demo/DemoScreen";
import { ErrorPanel } from "../components/ErrorPanel";
import type { CaptureSummary, Product, ReceiverReport } from "../platform";

const sortKeys = () => ({ products: ["listingName", "name", "status", "created", "updated"], transactions: ["id", "status", "created", "updated", "requestType"], known: true, triedProducts: [], triedTransactions: [] });

describe("Products listing", () => {
  it("sorts by header click, adds a key with shift-click, and pages", async () => {
    const calls = mockCommands({
      sort_keys: sortKeys,
      list_products: (args) => pageOf([product(1), product(2)], args, 120),
    });
    renderWithClient(<ProductsScreen />);
    await screen.findAllByText("Product 1");
    fireEvent.click(await screen.findByRole("button", { name: /Name/ }));
    await waitFor(() => expect(screen.getByLabelText("Sort string")).toHaveValue("name"));
    fireEvent.click(screen.getByRole("button", { name: /Created/ }), { shiftKey: true });
    await waitFor(() => expect(screen.getByLabelText("Sort string")).toHaveValue("name,created"));
    fireEvent.click(screen.getByRole("button", { name: "Next page" }));
    await waitFor(() => expect(screen.getByTestId("page-label")).toHaveTextContent("Page 2 of 5"));
    const last = calls.filter((c) => c.cmd === "list_products").at(-1);
    expect(last?.args.query).toEqual({ start: 25, limit: 25, sort: "name,created" });
    // Columns the API cannot sort by have no sort button.
    expect(screen.queryByRole("button", { name: /Hooks/ })).toBeNull();
  });

  it("on another service, says per header what it said of each key and asks before resending a refused one", async () => {
    const otherService = () => ({
      products: ["listingName", "name", "status", "created", "updated"],
      transactions: [],
      known: false,
      triedProducts: [
        { key: "listingName", refusal: null },
        { key: "name", refusal: "sorting by 'name' is not supported" },
      ],
      triedTransactions: [],
    });
    const calls = mockCommands({ sort_keys: otherService, list_products: (args) => pageOf([product(1)], args, 1) });
    renderWithClient(<ProductsScreen />);
    await screen.findAllByText("Product 1");
    const header = (key: string) => document.querySelector(`[data-sort-key="${key}"]`) as HTMLElement;
    await waitFor(() => expect(header("listingName")).toHaveAttribute("data-standing", "accepted"));
    expect(header("name")).toHaveAttribute("data-standing", "refused");
    expect(header("name").title).toContain("sorting by 'name' is not supported");
    expect(header("created")).toHaveAttribute("data-standing", "untried");
    expect(header("created").title).toContain("Not tried yet");

    // A key not tried yet is sent as any other.
    fireEvent.click(header("created"));
    await waitFor(() => expect(calls.filter((c) => c.cmd === "list_products").at(-1)?.args.query).toEqual({ start: 0, limit: 25, sort: "created" }));

    // A refused one only once the user says so, and then marked as asked again.
    const confirm = vi.spyOn(window, "confirm").mockReturnValueOnce(false).mockReturnValueOnce(true);
    fireEvent.click(header("name"));
    expect(confirm).toHaveBeenCalledTimes(1);
    expect(calls.filter((c) => c.cmd === "list_products").at(-1)?.args.query).toEqual({ start: 0, limit: 25, sort: "created" });
    fireEvent.click(header("name"));
    await waitFor(() => expect(calls.filter((c) => c.cmd === "list_products").at(-1)?.args.query).toEqual({ start: 0, limit: 25, sort: "name", tryRefused: true }));
    confirm.mockRestore();
  });

  it("offers to try a sort the app held back because the service refused it before", async () => {
    const calls = mockCommands({
      sort_keys: () => ({ products: [], transactions: [], known: false, triedProducts: [{ key: "name", refusal: "no" }], triedTransactions: [] }),
      list_products: (args) => {
        const q = args.query as { sort: string; tryRefused?: boolean };
        if (q.sort === "name" && !q.tryRefused) throw { kind: "invalidInput", message: "This service refused sorting by `name` before (no), so it was not sent again.", hint: "Sort by another column.", status: null, errorCode: null };
        return pageOf([product(1)], args, 1);
      },
    });
    renderWithClient(<ProductsScreen />);
    await screen.findAllByText("Product 1");
    const input = screen.getByLabelText("Sort string");
    fireEvent.change(input, { target: { value: "name" } });
    fireEvent.keyDown(input, { key: "Enter" });
    fireEvent.click(await screen.findByRole("button", { name: "Try it anyway" }));
    await waitFor(() => expect(calls.filter((c) => c.cmd === "list_products").at(-1)?.args.query).toEqual({ start: 0, limit: 25, sort: "name", tryRefused: true }));
  });

  it("changes the page size and jumps to a page", async () => {
    const calls = mockCommands({ sort_keys: sortKeys, list_products: (args) => pageOf([product(1)], args, 120) });
    renderWithClient(<ProductsScreen />);
    await screen.findAllByText("Product 1");
    fireEvent.change(screen.getByLabelText("Page size"), { target: { value: "50" } });
    fireEvent.change(screen.getByLabelText("Jump to page"), { target: { value: "3" } });
    fireEvent.click(screen.getByRole("button", { name: "Go" }));
    await waitFor(() => expect(calls.filter((c) => c.cmd === "list_products").at(-1)?.args.query).toEqual({ start: 100, limit: 50, sort: "listingName", defaultSort: true }));
    fireEvent.change(screen.getByLabelText("Jump to page"), { target: { value: "9" } });
    fireEvent.click(screen.getByRole("button", { name: "Go" }));
    expect(await screen.findByText("Pages run from 1 to 3.")).toBeInTheDocument();
  });

  it("shows a refused sort string in words, not a blank table", async () => {
    mockCommands({
      sort_keys: sortKeys,
      list_products: (args) => {
        const q = args.query as { sort: string };
        if (q.sort === "bogus") throw { kind: "invalidInput", message: "The sort string is not accepted: `bogus` is not sortable.", hint: "Correct it.", status: null, errorCode: null };
        return pageOf([product(1)], args, 1);
      },
    });
    renderWithClient(<ProductsScreen />);
    await screen.findAllByText("Product 1");
    const input = screen.getByLabelText("Sort string");
    fireEvent.change(input, { target: { value: "bogus" } });
    fireEvent.keyDown(input, { key: "Enter" });
    expect(await screen.findByText(/is not sortable/)).toBeInTheDocument();
  });

  it("shows a default sort the service does not take as the service's own order with a quiet note, and a chosen one's refusal as before", async () => {
    const refusal = { kind: "invalidRequest", message: "invalid request (HTTP 400): sorting by 'listingName' is not supported", hint: "Check the sort.", status: 400, errorCode: null };
    const calls = mockCommands({
      sort_keys: sortKeys,
      list_products: (args) => {
        const q = args.query as { sort: string; defaultSort?: boolean };
        if (q.sort !== "listingName") return pageOf([product(1), product(2)], args, 2);
        if (!q.defaultSort) throw refusal;
        // The shell's answer to the default it could not sort by: the service's own order.
        return { ...pageOf([product(2), product(1)], args, 2), sort: "", sortNote: "Shown in the service's own order: this service does not sort by listingName." };
      },
    });
    renderWithClient(<ProductsScreen />);
    await screen.findAllByText("Product 2");
    expect(screen.getByTestId("sort-note")).toHaveTextContent("this service does not sort by listingName");
    expect(screen.queryByRole("alert")).toBeNull();
    expect(screen.queryByText(/Not accepted/)).toBeNull();
    const rows = within(screen.getByLabelText("Products rows")).getAllByRole("row");
    expect(rows.map((r) => r.getAttribute("data-row-id"))).toEqual(["p-2", "p-1"]);
    expect(calls.find((c) => c.cmd === "list_products")?.args.query).toEqual({ start: 0, limit: 25, sort: "listingName", defaultSort: true });
    // The sort box and the header arrows say the page is in no sort of the console's.
    expect(screen.getByLabelText("Sort string")).toHaveValue("");
    expect(document.querySelector('[data-sort-key="listingName"] .sort-ind')?.textContent ?? "").toBe("");

    // The user chooses listingName: theirs is sent as it is, and its refusal shown.
    fireEvent.click(document.querySelector('[data-sort-key="listingName"]') as HTMLElement);
    await waitFor(() => expect(calls.filter((c) => c.cmd === "list_products").at(-1)?.args.query).toEqual({ start: 0, limit: 25, sort: "listingName" }));
    expect(await screen.findByText(/is not supported/)).toBeInTheDocument();
    expect(screen.queryByTestId("sort-note")).toBeNull();
  });

  it("moves the selection with arrow keys and shows the raw JSON", async () => {
    mockCommands({ sort_keys: sortKeys, list_products: (args) => pageOf([product(1), product(2)], args, 2) });
    renderWithClient(<ProductsScreen />);
    await screen.findAllByText("Product 2");
    const rows = screen.getByLabelText("Products rows");
    fireEvent.keyDown(rows, { key: "ArrowDown" });
    const panel = screen.getByLabelText("Selected record");
    expect(within(panel).getAllByText("p-2").length).toBeGreaterThan(0);
    expect(within(panel).queryByText("p-1")).toBeNull();
    fireEvent.click(within(panel).getByRole("tab", { name: "Raw JSON" }));
    expect(within(panel).getByText(/"listingName": "Product 2"/)).toBeInTheDocument();
  });
});

describe("Product detail", () => {
  it("shows a product another service sent with only what the spec pins, and every field it sent", async () => {
    const sent = { id: "p-9", webhooks: [{ url: "https://receiver.example/hooks", events: ["created", "archived"] }], vendorScore: 7 };
    mockCommands({ get_product: () => ({ id: "p-9", requestTypes: [], credentials: [], webhooks: [{ url: "https://receiver.example/hooks", events: ["created", "archived"], subscriptionId: null }], document: sent }) });
    renderWithClient(<ProductDetail id="p-9" />);
    expect(await screen.findByRole("heading", { name: "p-9" })).toBeInTheDocument();
    const subscriptions = screen.getByRole("table", { name: "Subscriptions" });
    expect(within(subscriptions).getByText("https://receiver.example/hooks")).toBeInTheDocument();
    expect(within(subscriptions).getByText("created, archived")).toBeInTheDocument();
    expect(within(subscriptions).getByText(/Not addressable: the service sent no subscriptionId/)).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Rotate key" })).toBeNull();
    fireEvent.click(screen.getByRole("tab", { name: "Raw JSON" }));
    expect(screen.getByText(/"vendorScore": 7/)).toBeInTheDocument();
  });

  it("checks a pasted key as it is typed, shows the new key once, then drops it", async () => {
    const good = "Abcdefghijklmnopqrstuvwxyz0123456789!";
    mockCommands({
      get_product: () => product(1),
      subscription_keys: (a) => ({ subscriptionId: a.subscriptionId, hasCurrent: true, hasPrevious: false }),
      signing_key_problems: (a) => ((a.key as string) === good ? [] : ["The key needs a digit."]),
      rotate_signing_key: (a) => ({ subscriptionId: (a.form as { subscriptionId: string }).subscriptionId, key: good, previousStillVerifies: true }),
    });
    renderWithClient(<ProductDetail id="p-1" />);
    fireEvent.click(await screen.findByRole("button", { name: "Rotate key" }));
    fireEvent.click(screen.getByLabelText("Paste my own"));
    fireEvent.change(screen.getByLabelText("Signing key"), { target: { value: "weak" } });
    expect(await screen.findByText("The key needs a digit.")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Rotate" })).toBeDisabled();
    fireEvent.change(screen.getByLabelText("Signing key"), { target: { value: good } });
    expect(await screen.findByText("The key meets the rule.")).toBeInTheDocument();
    fireEvent.click(screen.getByRole("button", { name: "Rotate" }));
    expect(await screen.findByTestId("shown-key")).toHaveTextContent(good);
    expect(screen.getByText(/previous key still verifies/)).toBeInTheDocument();
    fireEvent.click(screen.getByRole("button", { name: "Done" }));
    await waitFor(() => expect(document.body.textContent).not.toContain(good));
  });
});

describe("Product detail: editing and deleting subscriptions", () => {
  const keys = (a: Record<string, unknown>) => ({ subscriptionId: a.subscriptionId, hasCurrent: true, hasPrevious: false });

  it("saves only the changed fields through update_subscription and shows the product again", async () => {
    let current = product(1);
    const calls = mockCommands({
      get_product: () => current,
      subscription_keys: keys,
      update_subscription: (a) => {
        const form = a.form as { url: string | null; events: Array<"created" | "updated"> | null };
        const w = current.webhooks[0] as Product["webhooks"][number];
        const changed = { ...w, url: form.url ?? w.url, events: form.events ?? w.events };
        current = { ...current, webhooks: [changed] };
        return changed;
      },
    });
    renderWithClient(<ProductDetail id="p-1" />);
    fireEvent.click(await screen.findByTestId("subscription-edit-sub-1"));
    const form = screen.getByRole("form", { name: "Edit subscription" });
    expect(within(form).getByRole("button", { name: "Save subscription" })).toBeDisabled();
    fireEvent.change(within(form).getByLabelText("Callback URL"), { target: { value: "https://new.example.app/webhooks" } });
    fireEvent.click(within(form).getByLabelText("updated"));
    fireEvent.click(within(form).getByRole("button", { name: "Save subscription" }));
    expect(await screen.findByTestId("subscription-done")).toHaveTextContent("Subscription sub-1 saved.");
    expect(calls.find((c) => c.cmd === "update_subscription")?.args).toEqual({
      form: { productId: "p-1", subscriptionId: "sub-1", url: "https://new.example.app/webhooks", events: ["created", "updated"], resource: null },
    });
    await waitFor(() => expect(document.querySelector('[data-subscription-id="sub-1"]')).toHaveAttribute("data-url", "https://new.example.app/webhooks"));
    expect(calls.filter((c) => c.cmd === "get_product")).toHaveLength(2);
  });

  it("refuses an edit with no events before sending it", async () => {
    const calls = mockCommands({ get_product: () => product(1), subscription_keys: keys });
    renderWithClient(<ProductDetail id="p-1" />);
    fireEvent.click(await screen.findByTestId("subscription-edit-sub-1"));
    fireEvent.click(screen.getByLabelText("created"));
    expect(screen.getByText("Pick at least one event.")).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Save subscription" })).toBeDisabled();
    expect(calls.some((c) => c.cmd === "update_subscription")).toBe(false);
  });

  it("deletes a subscription after a confirmation that says its keys leave the keychain", async () => {
    const calls = mockCommands({
      get_product: () => product(1),
      subscription_keys: keys,
      delete_subscription: () => ({ ...product(1), webhooks: [] }),
    });
    renderWithClient(<ProductDetail id="p-1" />);
    fireEvent.click(await screen.findByTestId("subscription-delete-sub-1"));
    const confirm = screen.getByTestId("subscription-delete-confirm");
    expect(confirm).toHaveTextContent("its signing keys are removed from the keychain");
    expect(calls.some((c) => c.cmd === "delete_subscription")).toBe(false);
    fireEvent.click(within(confirm).getByRole("button", { name: "Delete subscription" }));
    expect(await screen.findByText("No subscriptions yet: add one pointing at the listener.")).toBeInTheDocument();
    expect(screen.getByTestId("subscription-done")).toHaveTextContent("Subscription sub-1 deleted; its signing keys were removed from the keychain.");
    expect(calls.find((c) => c.cmd === "delete_subscription")?.args).toEqual({ productId: "p-1", subscriptionId: "sub-1" });
  });

  it("says what failed when the keys could not be removed, and reads the product again", async () => {
    let reads = 0;
    const calls = mockCommands({
      get_product: () => {
        reads += 1;
        return reads === 1 ? product(1) : { ...product(1), webhooks: [] };
      },
      subscription_keys: keys,
      delete_subscription: () => {
        throw { kind: "keychain", message: "The subscription was deleted, but its keys are still in the keychain.", hint: "Unlock the keychain and remove them.", status: null, errorCode: null };
      },
    });
    renderWithClient(<ProductDetail id="p-1" />);
    fireEvent.click(await screen.findByTestId("subscription-delete-sub-1"));
    fireEvent.click(screen.getByRole("button", { name: "Delete subscription" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("its keys are still in the keychain");
    await waitFor(() => expect(calls.filter((c) => c.cmd === "get_product")).toHaveLength(2));
    expect(await screen.findByText("No subscriptions yet: add one pointing at the listener.")).toBeInTheDocument();
  });
});

describe("Product detail: checking a subscription's receiver", () => {
  const keys = (a: Record<string, unknown>) => ({ subscriptionId: a.subscriptionId, hasCurrent: true, hasPrevious: false });
  const report: ReceiverReport = {
    url: "https://hooks.example.app/webhooks",
    subscriptionId: "sub-1",
    resource: "urn:svc:partner:transaction",
    timeoutMs: 30000,
    requestsSent: 6,
    rules: [
      { id: "https-trusted-certificate", title: "HTTPS endpoint with a certificate signed by a certificate authority", outcome: "pass", summary: "Certificate for hooks.example.app, signed by a trusted authority." },
      { id: "tls-1.2-or-above", title: "TLS 1.2 or above", outcome: "pass", summary: "Accepts TLS 1.3 and TLS 1.2.", tlsVersions: ["TLS 1.3", "TLS 1.2"] },
      { id: "acknowledged-in-time", title: "A correctly signed notification is acknowledged (200-399) within the timeout", outcome: "pass", summary: "200 in 12 ms.", evidence: [{ sent: "a correctly signed notification", eventId: "e-1", status: 200, durationMs: 12 }] },
      {
        id: "signature-verified",
        title: "Only notifications whose signature matches the raw body are acknowledged",
        outcome: "fail",
        summary: "It does not verify signatures: a notification signed with another key was acknowledged.",
        evidence: [
          { sent: "signed with another key", eventId: "e-2", status: 200, durationMs: 9 },
          { sent: "no signature", eventId: "e-3", status: 200, durationMs: 8, bodyExcerpt: "ok" },
        ],
      },
      { id: "redelivery-acknowledged", title: "A redelivery (same eventId and body) is acknowledged again", outcome: "pass", summary: "200 in 7 ms." },
      { id: "no-sensitive-data", title: "No response carries the signing key or a stack trace", outcome: "pass", summary: "No response carried the key or a stack trace." },
    ],
  };

  it("runs the check for the subscription and shows each rule with its outcome and evidence", async () => {
    const remote = { ...product(1), webhooks: [{ subscriptionId: "sub-1", url: "https://hooks.example.app/webhooks", events: ["created" as const], resource: "urn:svc:partner:transaction" as const }] };
    const calls = mockCommands({ get_product: () => remote, subscription_keys: keys, check_receiver: () => report });
    renderWithClient(<ProductDetail id="p-1" />);
    fireEvent.click(await screen.findByTestId("subscription-check-sub-1"));
    const panel = screen.getByTestId("receiver-check-sub-1");
    // An https URL: plain http is not allowed unless the user says so.
    expect(within(panel).getByRole("checkbox")).not.toBeChecked();
    fireEvent.click(within(panel).getByTestId("receiver-check-run"));
    const shown = await within(panel).findByTestId("receiver-report");
    expect(shown).toHaveTextContent("1 of 6 rules failed");
    expect(shown.querySelector('[data-rule="signature-verified"]')).toHaveAttribute("data-outcome", "fail");
    expect(shown.querySelector('[data-rule="signature-verified"]')).toHaveTextContent("It does not verify signatures");
    expect(shown.querySelector('[data-rule="tls-1.2-or-above"]')).toHaveTextContent("Accepted: TLS 1.3, TLS 1.2");
    expect(within(shown).getByText("2 requests")).toBeInTheDocument();
    expect(calls.find((c) => c.cmd === "check_receiver")?.args).toEqual({ form: { productId: "p-1", subscriptionId: "sub-1", allowHttp: false } });
  });

  it("allows plain http for a receiver on this machine, and says why a check could not run", async () => {
    const local = { ...product(1), webhooks: [{ subscriptionId: "sub-1", url: "http://127.0.0.1:7070/webhooks", events: ["created" as const], resource: "urn:svc:partner:transaction" as const }] };
    const calls = mockCommands({
      get_product: () => local,
      subscription_keys: keys,
      check_receiver: () => {
        throw { kind: "network", message: "The receiver could not be reached: connection refused.", hint: "Start the receiver (or its tunnel) and check again.", status: null, errorCode: null };
      },
    });
    renderWithClient(<ProductDetail id="p-1" />);
    fireEvent.click(await screen.findByTestId("subscription-check-sub-1"));
    const panel = screen.getByTestId("receiver-check-sub-1");
    expect(within(panel).getByRole("checkbox")).toBeChecked();
    fireEvent.click(within(panel).getByTestId("receiver-check-run"));
    expect(await within(panel).findByRole("alert")).toHaveTextContent("could not be reached");
    expect(calls.find((c) => c.cmd === "check_receiver")?.args).toEqual({ form: { productId: "p-1", subscriptionId: "sub-1", allowHttp: true } });
  });
});

describe("Transaction detail", () => {
  it("shows the timeline and sends the response form", async () => {
    const calls = mockCommands({
      get_transaction: () => transaction(1),
      transaction_events: () => [
        { id: "e1", type: "urn:svc:partner:transaction:request:created", text: "Request created", from: "System", sent: "2026-01-01T00:00:00Z", comments: null, details: null },
      ],
      respond_transaction: () => ({ ...transaction(1), response: { status: "processing", partnerStatus: "Ordered", referenceNumber: "R-1" } }),
    });
    renderWithClient(<TransactionDetail id="t-1" />);
    expect(await screen.findByText("Request created")).toBeInTheDocument();
    fireEvent.change(screen.getByLabelText("Partner status"), { target: { value: "Ordered" } });
    fireEvent.change(screen.getByLabelText("Reference number"), { target: { value: "R-1" } });
    fireEvent.click(screen.getByRole("button", { name: "Send response" }));
    expect(await screen.findByText("Response sent.")).toBeInTheDocument();
    expect(calls.find((c) => c.cmd === "respond_transaction")?.args.form).toEqual({
      transactionId: "t-1",
      response: JSON.stringify({ status: "processing", partnerStatus: "Ordered", referenceNumber: "R-1" }),
      confirm: null,
    });
  });

  it("asks before a final status, and on production wants the transaction's id typed", async () => {
    const production = { ...embeddedConnection, id: "c-live", label: "Live", embedded: false, environment: "production" as const, labelled: "production" as const };
    const calls = mockCommands({
      app_status: () => readyStatus({ active: production, connections: [embeddedConnection, production] }),
      get_transaction: () => transaction(1),
      transaction_events: () => [],
      respond_transaction: () => ({ ...transaction(1), response: { status: "failed" } }),
    });
    renderWithClient(<TransactionDetail id="t-1" />);
    await screen.findByRole("form", { name: "Respond" });
    fireEvent.change(screen.getByLabelText("Response status"), { target: { value: "failed" } });
    fireEvent.change(screen.getByLabelText("Other response fields"), { target: { value: '{"errors": [{"code": "E1"' } });
    expect(screen.getByTestId("response-json-error")).toHaveTextContent("The other fields are not JSON");
    expect(screen.getByRole("button", { name: "Send response" })).toBeDisabled();
    fireEvent.change(screen.getByLabelText("Other response fields"), { target: { value: '{"errors": [{"code": "E1", "description": "No access"}]}' } });
    fireEvent.click(screen.getByRole("button", { name: "Send response" }));
    const ask = await screen.findByRole("alertdialog", { name: "Send a final response" });
    expect(ask).toHaveTextContent("failed is final: it locks this transaction's request and response for good");
    expect(ask).toHaveTextContent("type the transaction's id");
    const send = within(ask).getByRole("button", { name: "Send failed" });
    expect(send).toBeDisabled();
    fireEvent.change(within(ask).getByLabelText("Transaction id to confirm"), { target: { value: "t-2" } });
    expect(send).toBeDisabled();
    expect(calls.some((c) => c.cmd === "respond_transaction")).toBe(false);
    fireEvent.change(within(ask).getByLabelText("Transaction id to confirm"), { target: { value: "t-1" } });
    fireEvent.click(send);
    await waitFor(() => expect(calls.some((c) => c.cmd === "respond_transaction")).toBe(true));
    expect(calls.find((c) => c.cmd === "respond_transaction")?.args.form).toEqual({
      transactionId: "t-1",
      response: JSON.stringify({ status: "failed", errors: [{ code: "E1", description: "No access" }] }),
      confirm: "t-1",
    });
  });

  it("marks the event a notification named, and says when it is not in the timeline", async () => {
    const event = (id: string, text: string, sent: string) => ({ id, type: "urn:svc:partner:transaction:request:updated", text, from: "System", sent, comments: null, details: null });
    mockCommands({
      get_transaction: () => transaction(1),
      transaction_events: () => [event("e1", "First", "2026-01-01T00:00:00Z"), event("e2", "Second", "2026-01-02T00:00:00Z")],
    });
    Element.prototype.scrollIntoView = () => {};
    const view = renderWithClient(<TransactionDetail id="t-1" eventId="e1" />);
    await screen.findByText("First");
    const marked = screen.getByText("First").closest("li");
    expect(marked).toHaveAttribute("aria-current", "true");
    expect(marked).toHaveTextContent("the notification's event");
    expect(screen.getByText("Second").closest("li")).not.toHaveAttribute("aria-current");
    view.unmount();
    renderWithClient(<TransactionDetail id="t-1" eventId="e-gone" />);
    expect(await screen.findByText(/is not in this transaction's timeline/)).toHaveTextContent("e-gone");
  });

  it("shows every field the service sent, those the console does not know included", async () => {
    const sent = { id: "t-7", priority: 2, channel: "api", request: { type: "NEW_REQUEST" } };
    mockCommands({
      get_transaction: () => ({ id: "t-7", request: { type: "NEW_REQUEST" }, document: sent }),
      transaction_events: () => [],
    });
    renderWithClient(<TransactionDetail id="t-7" />);
    const asSent = await screen.findByRole("region", { name: "Transaction as sent" });
    expect(within(asSent).getByText("priority")).toBeInTheDocument();
    fireEvent.click(within(asSent).getByRole("tab", { name: "Raw JSON" }));
    expect(within(asSent).getByText(/"channel": "api"/)).toBeInTheDocument();
  });

  it("tells each notification's story: the service's attempts, the listener's answers, forwards and recoveries", async () => {
    const entry = (step: string, at: string, more: Record<string, unknown> = {}) => ({ at, step, captureId: null, attempt: null, status: null, verdict: null, error: null, url: null, elapsedMs: null, ...more });
    const calls = mockCommands({
      get_transaction: () => transaction(1),
      transaction_events: () => [],
      transaction_notifications: () => ({
        transactionId: "t-1",
        notifications: [
          {
            subscriptionId: "sub-1", resourceType: "urn:svc:partner:transaction", eventType: "updated", eventId: "ev-2", outcome: "discarded",
            entries: [
              entry("serviceAttempt", "2026-01-02T00:00:00Z", { attempt: 1, error: "connection refused", url: "http://127.0.0.1:7070/webhooks", elapsedMs: 2 }),
              entry("serviceGaveUp", "2026-01-02T00:00:40Z", { attempt: 3, url: "http://127.0.0.1:7070/webhooks" }),
              entry("recoveryCaptured", "2026-01-02T01:00:00Z", { captureId: 12, status: 200, verdict: "valid" }),
            ],
          },
          {
            subscriptionId: "sub-1", resourceType: "urn:svc:partner:transaction", eventType: "created", eventId: "ev-1", outcome: "delivered",
            entries: [
              entry("serviceAttempt", "2026-01-01T00:00:00Z", { attempt: 1, status: 200, url: "http://127.0.0.1:7070/webhooks", elapsedMs: 3 }),
              entry("captured", "2026-01-01T00:00:00Z", { captureId: 7, attempt: 1, status: 200, verdict: "valid" }),
              entry("forwarded", "2026-01-01T00:00:01Z", { captureId: 7, status: 500, url: "http://localhost:3000/hooks", elapsedMs: 9 }),
            ],
          },
        ],
        deliveriesNote: null,
        capturesNote: null,
        capturesCapped: false,
      }),
      save_transaction_evidence: () => ({ path: "/tmp/transaction-t-1-evidence.json", count: 2, skipped: 0, cancelled: false }),
    });
    renderWithClient(<TransactionDetail id="t-1" />);
    const list = await screen.findByRole("list", { name: "Notifications of this transaction" });
    const stories = within(list).getAllByRole("listitem").filter((li) => li.classList.contains("story"));
    expect(stories).toHaveLength(2);
    expect(stories[0]).toHaveAttribute("data-outcome", "discarded");
    expect(stories[0]).toHaveTextContent("service gave up");
    expect(stories[0]).toHaveTextContent("listener received a recovery");
    expect(stories[0]).toHaveTextContent("connection refused");
    expect(stories[1]).toHaveTextContent("forwarded");
    expect(stories[1]).toHaveTextContent("got 500");
    expect(stories[1]).toHaveTextContent("http://localhost:3000/hooks");
    expect(calls.find((c) => c.cmd === "transaction_notifications")?.args).toEqual({ id: "t-1" });
    fireEvent.click(screen.getByTestId("transaction-evidence"));
    expect(await screen.findByTestId("job-result")).toHaveTextContent("2 notifications saved · /tmp/transaction-t-1-evidence.json");
    expect(calls.find((c) => c.cmd === "save_transaction_evidence")?.args).toEqual({ id: "t-1" });
    fireEvent.click(within(stories[1] as HTMLElement).getAllByRole("button", { name: "capture #7" })[0] as HTMLElement);
    expect(window.location.hash).toBe("#/webhooks/7");
  });

  it("says when no notification is known, and why the service's records are not there", async () => {
    mockCommands({
      get_transaction: () => transaction(1),
      transaction_events: () => [],
      transaction_notifications: () => ({ transactionId: "t-1", notifications: [], deliveriesNote: "A production service keeps no delivery records the console can read: only what the listener received is shown.", capturesNote: null, capturesCapped: false }),
    });
    renderWithClient(<TransactionDetail id="t-1" />);
    expect(await screen.findByTestId("notifications-none")).toHaveTextContent("none was captured.");
    expect(screen.getByText(/A production service keeps no delivery records/)).toBeInTheDocument();
  });

  it("says what failed when the transaction cannot be read", async () => {
    mockCommands({
      get_transaction: () => {
        throw { kind: "server", message: "not found: no transaction t-9", hint: "Reload the list.", status: 404, errorCode: "NotFound" };
      },
      transaction_events: () => [],
    });
    renderWithClient(<TransactionDetail id="t-9" />);
    expect(await screen.findByRole("alert")).toHaveTextContent("no transaction t-9");
    expect(screen.getByRole("alert")).toHaveTextContent("Reload the list.");
  });
});

describe("Token", () => {
  it("shows both countdowns and the history, and revokes", async () => {
    const now = new Date().toISOString();
    const active = {
      phase: "active",
      issuedAt: now,
      idleExpiresAt: new Date(Date.now() + 15 * 60_000).toISOString(),
      maxExpiresAt: new Date(Date.now() + 120 * 60_000).toISOString(),
      now,
      lastError: null,
      history: [{ at: now, kind: "issued", detail: "lapses later" }],
    };
    const calls = mockCommands({ token_state: () => active, token_revoke: () => ({ ...active, phase: "revoked", idleExpiresAt: null, maxExpiresAt: null }) });
    renderWithClient(<TokenScreen />);
    expect(await screen.findByTestId("idle-countdown")).toHaveTextContent(/1[45]:\d\d/);
    expect(screen.getByTestId("max-countdown")).toHaveTextContent(/1:59:\d\d|2:00:00/);
    expect(screen.getByText("lapses later")).toBeInTheDocument();
    fireEvent.click(screen.getByRole("button", { name: "Revoke" }));
    await waitFor(() => expect(screen.getByTestId("token-phase")).toHaveTextContent("revoked"));
    expect(calls.some((c) => c.cmd === "token_revoke")).toBe(true);
  });
});

describe("Connections", () => {
  it("explains missing fields and sends nothing until they are filled", async () => {
    const calls = mockCommands({
      app_status: () => readyStatus({ active: null }),
    });
    renderWithClient(<ConnectionsScreen />);
    fireEvent.click(await screen.findByRole("button", { name: "Add and sign in" }));
    expect(await screen.findByText("The client id is required.")).toBeInTheDocument();
    expect(calls.some((c) => c.cmd === "add_connection")).toBe(false);
  });

  it("clears the secret from the form after it was sent", async () => {
    mockCommands({
      app_status: () => readyStatus({ active: null }),
      add_connection: () => {
        throw { kind: "server", message: "not authorised: bad client credentials", hint: "Check them.", status: 401, errorCode: null };
      },
    });
    renderWithClient(<ConnectionsScreen />);
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText("Name"), "Prod");
    await user.type(screen.getByLabelText("Base URL"), "https://api.example.com");
    await user.type(screen.getByLabelText("Client id"), "id");
    await user.type(screen.getByLabelText(/Client secret/), "hunter2");
    await user.click(screen.getByRole("button", { name: "Add and sign in" }));
    expect(await screen.findByText(/bad client credentials/)).toBeInTheDocument();
    expect(screen.getByLabelText(/Client secret/)).toHaveValue("");
  });
});

describe("Connections: the embedded sandbox", () => {
  const staging = { id: "c-1", label: "Staging", baseUrl: "https://staging.example.com", clientId: "client-1", environment: "sandbox" as const, labelled: "sandbox" as const, serviceEnvironment: null, embedded: false, readOnly: false, network: embeddedConnection.network };
  const notStarted = { ...embeddedConnection, baseUrl: "" };

  it("lists the embedded sandbox first even before it started, selectable and never removable", async () => {
    const calls = mockCommands({
      app_status: () => readyStatus({ active: staging, connections: [notStarted, staging] }),
      select_connection: () => readyStatus({ connections: [embeddedConnection, staging], version: 2 }),
    });
    renderWithClient(<ConnectionsScreen />);
    const row = await screen.findByText("Embedded sandbox").then((cell) => cell.closest("tr") as HTMLElement);
    expect(row).toHaveTextContent("not started: starts when used");
    expect(within(row).queryByRole("button", { name: "Remove" })).toBeNull();
    const stagingRow = screen.getByText("Staging").closest("tr") as HTMLElement;
    expect(within(stagingRow).getByText("active")).toBeInTheDocument();
    expect(within(stagingRow).queryByRole("button", { name: "Remove" })).toBeNull();
    fireEvent.click(within(row).getByRole("button", { name: "Use" }));
    await waitFor(() => expect(within(row).getByText("active")).toBeInTheDocument());
    expect(row).toHaveTextContent(embeddedConnection.baseUrl);
    expect(calls.find((c) => c.cmd === "select_connection")?.args).toEqual({ id: "embedded-sandbox" });
    // Now the other one can go.
    expect(within(screen.getByText("Staging").closest("tr") as HTMLElement).getByRole("button", { name: "Remove" })).toBeInTheDocument();
  });

  it("marks a saved connection read-only (never the embedded sandbox) and shows the mark it got back", async () => {
    const calls = mockCommands({
      app_status: () => readyStatus({ connections: [embeddedConnection, staging] }),
      set_connection_read_only: (args) => readyStatus({ connections: [embeddedConnection, { ...staging, readOnly: args.readOnly as boolean }] }),
    });
    renderWithClient(<ConnectionsScreen />);
    const stagingRow = await screen.findByText("Staging").then((cell) => cell.closest("tr") as HTMLElement);
    const embeddedRow = screen.getByText("Embedded sandbox").closest("tr") as HTMLElement;
    expect(within(embeddedRow).queryByTestId("connection-read-only")).toBeNull();
    const box = within(stagingRow).getByTestId("connection-read-only");
    expect(box).not.toBeChecked();
    fireEvent.click(box);
    await waitFor(() => expect(within(screen.getByText("Staging").closest("tr") as HTMLElement).getByTestId("connection-read-only")).toBeChecked());
    expect(calls.find((c) => c.cmd === "set_connection_read_only")?.args).toEqual({ id: "c-1", readOnly: true });
  });

  it("resets the sandbox only after a confirmation that says what is lost", async () => {
    const calls = mockCommands({
      app_status: () => readyStatus(),
      reset_sandbox: () => readyStatus({ version: 2 }),
    });
    renderWithClient(<ConnectionsScreen />);
    fireEvent.click(await screen.findByTestId("reset-sandbox"));
    const confirm = screen.getByTestId("reset-sandbox-confirm");
    expect(confirm).toHaveTextContent("Every product, subscription, transaction and delivery made in the embedded sandbox is lost; it starts again from the demo data.");
    fireEvent.click(within(confirm).getByRole("button", { name: "Cancel" }));
    expect(calls.some((c) => c.cmd === "reset_sandbox")).toBe(false);
    fireEvent.click(screen.getByTestId("reset-sandbox"));
    fireEvent.click(screen.getByRole("button", { name: "Yes, reset the sandbox" }));
    expect(await screen.findByText("The embedded sandbox started again from its demo data.")).toBeInTheDocument();
    expect(calls.filter((c) => c.cmd === "reset_sandbox")).toHaveLength(1);
    expect(screen.queryByTestId("reset-sandbox-confirm")).toBeNull();
  });

  it("says why a reset failed and keeps the confirmation open", async () => {
    mockCommands({
      app_status: () => readyStatus(),
      reset_sandbox: () => {
        throw { kind: "io", message: "The sandbox's data file could not be replaced.", hint: "Check the disk.", status: null, errorCode: null };
      },
    });
    renderWithClient(<ConnectionsScreen />);
    fireEvent.click(await screen.findByTestId("reset-sandbox"));
    fireEvent.click(screen.getByRole("button", { name: "Yes, reset the sandbox" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("The sandbox's data file could not be replaced.");
    expect(screen.getByTestId("reset-sandbox-confirm")).toBeInTheDocument();
  });
});

function capture(id: number, verdict: CaptureSummary["verdict"]): CaptureSummary {
  return { id, receivedAt: new Date(1_700_000_000_000 + id * 1000).toISOString(), verdict, eventType: "created", resourceType: "urn:svc:partner:transaction", resourceId: `tx-${id}`, instanceId: "demo", eventId: `e-${id}`, subscriptionId: "s", attempts: 1, replayed: false, groupAttempts: 1 };
}

describe("Webhooks inspector", () => {
  it("lists captures newest first with counts, filters, and opens a detail", async () => {
    mockCommands({
      ...captureStore([capture(3, "invalid-signature"), capture(2, "valid"), capture(1, "valid")]).handlers,
      capture_detail: (a) => ({
        summary: capture(a.id as number, "invalid-signature"),
        headers: [["svc-signature", "abc="]],
        rawBody: "{\"eventId\":\"e-3\"}",
        prettyBody: "{\n  \"eventId\": \"e-3\"\n}",
        resourceRef: "http://127.0.0.1/partner/v2/transactions/tx-3",
        departures: [],
        attempts: [capture(3, "invalid-signature")],
        answeredStatus: 401,
        outbound: [],
        open: { kind: "refused", reason: "Not offered: the notification's verdict is invalid-signature, so nothing in it can be trusted." },
      }),
    });
    renderWithClient(<Inspector />);
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("3 of 3"));
    const counts = screen.getByLabelText("Counts by verdict");
    expect(within(counts).getByText("invalid-signature").parentElement).toHaveTextContent("1");
    fireEvent.change(screen.getByLabelText("Verdict filter"), { target: { value: "valid" } });
    await waitFor(() => expect(screen.getByTestId("capture-count")).toHaveTextContent("2 of 3"));
  });
});

describe("Webhooks inspector: evidence for a support ticket", () => {
  it("saves every attempt of the notification with the chosen fields masked, and says what was masked", async () => {
    const calls = mockCommands({
      capture_detail: (a) => ({
        summary: capture(a.id as number, "valid"),
        headers: [["authorization", "[masked]"]],
        rawBody: "{}",
        prettyBody: "{}",
        resourceRef: null,
        departures: [],
        attempts: [capture(1, "invalid-signature"), capture(2, "valid")],
        answeredStatus: 200,
        outbound: [],
        open: { kind: "refused", reason: "Not offered: the notification has no resourceRef." },
      }),
      evidence_bundle: () => ({
        harPath: "/tmp/evidence-2.har",
        summaryPath: "/tmp/evidence-2.md",
        captures: 2,
        headersMasked: 1,
        fieldsMasked: 2,
        secretsMasked: 0,
        bodiesWithheld: 0,
        withDeliveries: true,
      }),
    });
    renderWithClient(<CaptureDetailPane id={2} onSelect={() => {}} filter={null} shown={3} />);
    fireEvent.click(await screen.findByRole("tab", { name: "evidence" }));
    // Two attempts: the whole notification is offered first.
    expect(screen.getByLabelText("Every attempt of its notification (2)")).toBeChecked();
    expect(screen.getByLabelText("The 3 captures shown")).not.toBeChecked();
    fireEvent.change(screen.getByLabelText("Fields to mask"), { target: { value: "loan.borrower.name, /meta/resourceId" } });
    fireEvent.click(screen.getByTestId("evidence-save"));
    const saved = await screen.findByTestId("evidence-saved");
    expect(saved).toHaveTextContent("2 captures in /tmp/evidence-2.har and /tmp/evidence-2.md");
    expect(saved).toHaveTextContent("1 headers, 2 body fields and 0 secrets masked · with the service's delivery records");
    expect(calls.find((c) => c.cmd === "evidence_bundle")?.args).toEqual({
      form: { captureId: 2, scope: "notification", shown: null, maskFields: ["loan.borrower.name", "/meta/resourceId"], path: null },
    });
  });
});

describe("Webhooks inspector: two captures compared", () => {
  it("compares this capture with the one shown before: body paths, headers that differ, verdicts", async () => {
    const side = (id: number, verdict: "valid" | "invalid-signature", answered: number) => ({
      id,
      receivedAt: "2026-01-01T00:00:00Z",
      verdict,
      answered,
      eventId: "ev-1",
      eventType: "created",
      bodySize: 100,
    });
    const calls = mockCommands({
      capture_detail: (a) => ({
        summary: capture(a.id as number, "invalid-signature"),
        headers: [],
        rawBody: "{}",
        prettyBody: "{}",
        resourceRef: null,
        departures: [],
        attempts: [capture(a.id as number, "invalid-signature")],
        answeredStatus: 401,
        outbound: [],
        open: { kind: "refused", reason: "Not offered." },
      }),
      compare_captures: () => ({
        first: side(3, "valid", 200),
        second: side(7, "invalid-signature", 401),
        body: { kind: "json", differences: [{ path: "/loan/amount", change: "changed", first: 100, second: 250 }, { path: "/extra", change: "added", first: null, second: true }] },
        headers: [
          { name: "Svc-Signature", first: "t=1,v1=aa", second: "t=1,v1=bb", same: false },
          { name: "Content-Type", first: "application/json", second: "application/json", same: true },
        ],
      }),
    });
    renderWithClient(<CaptureDetailPane id={7} onSelect={() => {}} compareWith={3} />);
    fireEvent.click(await screen.findByRole("tab", { name: "compare" }));
    const body = await screen.findByRole("table", { name: "Body differences" });
    expect(calls.find((c) => c.cmd === "compare_captures")?.args).toEqual({ first: 3, second: 7 });
    expect(within(body).getAllByRole("row")[1]).toHaveTextContent("/loan/amountchanged100250");
    expect(within(body).getAllByRole("row")[2]).toHaveTextContent("/extraadded—true");
    const headers = screen.getByRole("table", { name: "Headers compared" });
    expect(within(headers).getAllByRole("row")).toHaveLength(2); // only the one that differs
    expect(headers).toHaveTextContent("Svc-Signaturet=1,v1=aat=1,v1=bb");
    fireEvent.click(screen.getByLabelText("only those that differ"));
    expect(within(screen.getByRole("table", { name: "Headers compared" })).getAllByRole("row")).toHaveLength(3);
    expect(screen.getByRole("table", { name: "Compared captures" })).toHaveTextContent("Answered200401");
    // Another capture, typed.
    fireEvent.change(screen.getByLabelText("Capture to compare with"), { target: { value: "#5" } });
    fireEvent.click(screen.getByRole("button", { name: "Compare" }));
    await waitFor(() => expect(calls.filter((c) => c.cmd === "compare_captures").at(-1)?.args).toEqual({ first: 5, second: 7 }));
  });
});

describe("Demo", () => {
  it("plays the lender and logs what happened", async () => {
    mockCommands({
      list_products: (args) => pageOf([product(1)], args, 1),
      demo_new_transaction: () => ({ message: "Transaction t-1 created for Product 1", transactionId: "t-1", sandboxNow: new Date().toISOString() }),
      list_scenarios: () => ({ scenarios: [], problems: [], folder: "/tmp/scenarios" }),
      scenario_current: () => null,
    });
    renderWithClient(<DemoScreen embedded />);
    await screen.findByText(/Product 1/);
    fireEvent.click(screen.getByRole("button", { name: "New transaction" }));
    expect(await screen.findByText("Transaction t-1 created for Product 1")).toBeInTheDocument();
    expect(screen.getByLabelText("Demo transaction")).toHaveValue("t-1");
  });

  it("explains itself on a real connection", () => {
    mockCommands({});
    renderWithClient(<DemoScreen embedded={false} />);
    expect(screen.getByText(/embedded sandbox/)).toBeInTheDocument();
  });
});

describe("errors", () => {
  it("wraps an unexpected rejection in words", () => {
    renderWithClient(<ErrorPanel error={"boom"} />);
    expect(screen.getByRole("alert")).toHaveTextContent("Something went wrong");
    expect(screen.getByRole("alert")).toHaveTextContent("boom");
  });
});
