import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { emit } from "@tauri-apps/api/event";
import { describe, expect, it } from "vitest";
import { App } from "./App";
import type { AppStatus, DemoSubscription } from "./platform";
import { startLoading } from "./startup";
import { mockCommands } from "./test/render";
import { embeddedConnection, pageOf, product, readyStatus } from "./test/fixtures";

const starting: AppStatus = readyStatus({ phase: "starting", active: null, connections: [{ ...embeddedConnection, baseUrl: "" }], embeddedSandbox: null, version: 0 });
function ready(demoSubscription: DemoSubscription | null, version = 1): AppStatus {
  return readyStatus({ demoSubscription, version });
}
const sortKeys = () => ({ products: ["listingName"], transactions: ["id"], known: true, triedProducts: [], triedTransactions: [] });
const client = () => new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: 10_000 } } });

describe("App start-up", () => {
  it("waits for the shell with one call (no polling) and lists products the moment it is ready", async () => {
    let finish: (s: AppStatus) => void = () => {};
    const calls = mockCommands({
      app_status: () => starting,
      wait_for_start: () => new Promise<AppStatus>((resolve) => (finish = resolve)),
      sort_keys: sortKeys,
      list_products: (args) => pageOf([product(1), product(2)], args, 2),
    });
    render(<QueryClientProvider client={client()}><App /></QueryClientProvider>);
    expect(await screen.findByText(/Starting the embedded sandbox, signing in/)).toBeInTheDocument();
    await waitFor(() => expect(calls.some((c) => c.cmd === "wait_for_start")).toBe(true));
    finish(ready({ phase: "running", productName: null, error: null }));
    expect(await screen.findAllByText("Product 1")).not.toHaveLength(0);
    expect(screen.getByTestId("demo-subscription")).toHaveTextContent("Subscribing the demo product to the listener");
    // The first read, and one more once the status event is listened to: no polling.
    expect(calls.filter((c) => c.cmd === "app_status").length).toBeLessThanOrEqual(2);
    expect(calls.filter((c) => c.cmd === "wait_for_start")).toHaveLength(1);
  });

  it("tells the shell once, after its first frame, that the first screen is drawn (the capture store waits for it)", async () => {
    const calls = mockCommands({
      app_status: () => ready({ phase: "done", productName: "Product 1", error: null }),
      sort_keys: sortKeys,
      list_products: (args) => pageOf([product(1)], args, 1),
      first_screen_shown: () => null,
    });
    render(<QueryClientProvider client={client()}><App /></QueryClientProvider>);
    await waitFor(() => expect(calls.filter((c) => c.cmd === "first_screen_shown")).toHaveLength(1));
    expect(await screen.findAllByText("Product 1")).not.toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls.filter((c) => c.cmd === "first_screen_shown")).toHaveLength(1);
  });

  it("reads the status again once listening, so a change sent before that is not lost", async () => {
    // The demo subscription can finish before the status event is listened to; its event is
    // then never delivered, and only a second read shows that it is done.
    let reads = 0;
    mockCommands({
      app_status: () => {
        reads += 1;
        return reads === 1
          ? ready({ phase: "running", productName: null, error: null }, 1)
          : ready({ phase: "done", productName: "Product 1", error: null }, 2);
      },
      sort_keys: sortKeys,
      list_products: (args) => pageOf([product(1)], args, 1),
    });
    render(<QueryClientProvider client={client()}><App /></QueryClientProvider>);
    expect(await screen.findByText("Demo webhooks: Product 1 → listener")).toBeInTheDocument();
    expect(reads).toBe(2);
  });

  it("keeps the newer status when an older answer lands after the event announcing a change", async () => {
    let answer: (s: AppStatus) => void = () => {};
    const calls = mockCommands({
      app_status: () => new Promise<AppStatus>((resolve) => (answer = resolve)),
      sort_keys: sortKeys,
      list_products: (args) => pageOf([product(1)], args, 1),
    });
    render(<QueryClientProvider client={client()}><App /></QueryClientProvider>);
    await waitFor(() => expect(calls.some((c) => c.cmd === "app_status")).toBe(true));
    await emit("status", ready({ phase: "done", productName: "Product 1", error: null }, 3));
    expect(await screen.findByText("Demo webhooks: Product 1 → listener")).toBeInTheDocument();
    // The status call was answered while the subscription ran, and its answer lands last.
    answer(ready({ phase: "running", productName: null, error: null }, 2));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(screen.getByTestId("demo-subscription")).toHaveTextContent("Demo webhooks: Product 1 → listener");
  });

  it("asks for the first products page before the first render, and the table uses it", async () => {
    const calls = mockCommands({
      app_status: () => ready({ phase: "done", productName: "Product 1", error: null }),
      sort_keys: sortKeys,
      list_products: (args) => pageOf([product(1)], args, 1),
    });
    const queries = client();
    await startLoading(queries, "#/products");
    expect(calls.map((c) => c.cmd)).toEqual(["app_status", "list_products"]);
    expect(calls[1]?.args.query).toEqual({ start: 0, limit: 25, sort: "listingName", defaultSort: true });
    render(<QueryClientProvider client={queries}><App /></QueryClientProvider>);
    expect(await screen.findAllByText("Product 1")).not.toHaveLength(0);
    expect(screen.getByTestId("demo-subscription")).toHaveTextContent("Demo webhooks: Product 1 → listener");
    expect(calls.filter((c) => c.cmd === "list_products")).toHaveLength(1);
    // The preloaded read, and one more once the status event is listened to.
    expect(calls.filter((c) => c.cmd === "app_status").length).toBeLessThanOrEqual(2);
  });

  it("leaves a start-up page that failed to the table, which asks again and says what failed", async () => {
    const calls = mockCommands({
      app_status: () => ready(null),
      sort_keys: sortKeys,
      list_products: () => {
        throw { kind: "server", message: "The sandbox did not answer.", hint: "Restart it.", status: null, errorCode: null };
      },
    });
    const queries = client();
    await startLoading(queries, "#/products");
    render(<QueryClientProvider client={queries}><App /></QueryClientProvider>);
    expect(await screen.findByText("The sandbox did not answer.")).toBeInTheDocument();
    expect(calls.filter((c) => c.cmd === "list_products")).toHaveLength(2);
  });

  it("does not ask for products at start-up when another screen is open", async () => {
    const calls = mockCommands({ app_status: () => ready(null) });
    await startLoading(client(), "#/token");
    expect(calls.map((c) => c.cmd)).toEqual(["app_status"]);
  });

  it("makes the Webhooks screen ready once the shell is up: its store's first block and counts are read once, without opening it", async () => {
    const calls = mockCommands({
      app_status: () => ready({ phase: "done", productName: "Product 1", error: null }),
      sort_keys: sortKeys,
      list_products: (args) => pageOf([product(1)], args, 1),
      inspector_page: () => ({ offset: 0, total: 0, totalCapped: false, unsearched: 0, items: [] }),
      inspector_facets: () => ({ capped: false, verdicts: {}, eventTypes: [], resourceTypes: [], subscriptions: [], stored: 0, total: 0 }),
      inspector_warm_up: () => null,
    });
    render(<QueryClientProvider client={client()}><App /></QueryClientProvider>);
    expect(await screen.findAllByText("Product 1")).not.toHaveLength(0);
    await waitFor(() => expect(calls.some((c) => c.cmd === "inspector_facets")).toBe(true), { timeout: 5000 });
    const page = calls.find((c) => c.cmd === "inspector_page");
    expect(page?.args).toMatchObject({ query: { offset: 0, grouped: false } });
    // Then, once both are answered, the store readies its read connections for the first searches.
    await waitFor(() => expect(calls.some((c) => c.cmd === "inspector_warm_up")).toBe(true));
    const order = calls.map((c) => c.cmd);
    expect(order.indexOf("inspector_warm_up")).toBeGreaterThan(order.indexOf("inspector_facets"));
    expect(order.indexOf("inspector_warm_up")).toBeGreaterThan(order.indexOf("inspector_page"));
    expect(window.location.hash).not.toContain("webhooks");

    // Opened now, it renders at once: no "Loading…" while a lazy chunk resolves.
    act(() => {
      window.location.hash = "#/webhooks";
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    });
    expect(screen.queryByText("Loading…")).toBeNull();
    expect(screen.getByRole("heading", { name: "Webhooks" })).toBeInTheDocument();
    act(() => {
      window.location.hash = "";
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    });
  });

  it("colours the connection by what its service says when that differs from its label, and says so", async () => {
    const base = ready(null);
    const active = { ...base.active!, id: "c-1", label: "Labelled sandbox", embedded: false, environment: "production" as const, labelled: "sandbox" as const, serviceEnvironment: "prod" };
    mockCommands({ app_status: () => ({ ...base, active }), sort_keys: sortKeys, list_products: (args) => pageOf([product(1)], args, 1) });
    render(<QueryClientProvider client={client()}><App /></QueryClientProvider>);
    expect(await screen.findByTestId("env-badge")).toHaveTextContent("production");
    expect(screen.getByTestId("env-disagree")).toHaveTextContent("service says prod");
  });

  it("says the embedded sandbox's demo webhooks only while the embedded sandbox is the connection", async () => {
    const base = ready({ phase: "done", productName: "Product 1", error: null });
    const active = { ...base.active!, id: "c-1", label: "Acme UAT", embedded: false };
    mockCommands({ app_status: () => ({ ...base, active }), sort_keys: sortKeys, list_products: (args) => pageOf([product(1)], args, 1) });
    render(<QueryClientProvider client={client()}><App /></QueryClientProvider>);
    expect(await screen.findByText("Acme UAT")).toBeInTheDocument();
    expect(screen.queryByTestId("demo-subscription")).toBeNull();
  });

  it("shows a failed demo subscription in words while the tables stay usable", async () => {
    mockCommands({
      app_status: () =>
        ready({ phase: "failed", productName: null, error: { kind: "keychain", message: "The keychain refused the key.", hint: "Unlock it.", status: null, errorCode: null } }),
      sort_keys: sortKeys,
      list_products: (args) => pageOf([product(1)], args, 1),
    });
    render(<QueryClientProvider client={client()}><App /></QueryClientProvider>);
    expect(await screen.findByText("The keychain refused the key.")).toBeInTheDocument();
    expect(screen.getByTestId("demo-subscription")).toHaveTextContent("Demo webhooks not set up");
    expect(await screen.findAllByText("Product 1")).not.toHaveLength(0);
  });

  it("runs a failed demo subscription again when asked, and shows it under way", async () => {
    const calls = mockCommands({
      app_status: () =>
        ready({ phase: "failed", productName: null, error: { kind: "keychain", message: "The keychain refused the key.", hint: "Unlock it.", status: null, errorCode: null } }),
      retry_demo_subscription: () => ready({ phase: "running", productName: null, error: null }),
      sort_keys: sortKeys,
      list_products: (args) => pageOf([product(1)], args, 1),
    });
    render(<QueryClientProvider client={client()}><App /></QueryClientProvider>);
    fireEvent.click(await screen.findByRole("button", { name: "Try again" }));
    expect(await screen.findByText("Subscribing the demo product to the listener…")).toBeInTheDocument();
    expect(screen.queryByText("The keychain refused the key.")).not.toBeInTheDocument();
    expect(calls.filter((c) => c.cmd === "retry_demo_subscription")).toHaveLength(1);
  });

  it("drops what was read from a connection once another serves the screen (a reset sandbox's products are not shown from the cache)", async () => {
    let reachable = true;
    mockCommands({
      app_status: () => ready({ phase: "done", productName: "Product 1", error: null }, 1),
      sort_keys: sortKeys,
      list_products: (args) => {
        if (!reachable) throw { kind: "network", message: "The service did not answer.", hint: "Try again.", status: null, errorCode: null };
        return pageOf([product(1), product(2)], args, 2);
      },
    });
    render(<QueryClientProvider client={client()}><App /></QueryClientProvider>);
    expect(await screen.findAllByText("Product 2")).not.toHaveLength(0);
    // The embedded sandbox was reset: the same connection, served from a new address, which
    // fails to answer at first. The old rows must not stay on screen as if they were its.
    reachable = false;
    const reset = readyStatus({ demoSubscription: null, version: 5 });
    await emit("status", { ...reset, active: { ...reset.active!, baseUrl: "http://127.0.0.1:49999" } });
    expect(await screen.findByText("The service did not answer.")).toBeInTheDocument();
    expect(screen.queryAllByText("Product 2")).toHaveLength(0);
  });

describe("partner-console:// links", () => {
  it("goes where a link that started the app asked, and where a later one asks", async () => {
    window.location.hash = "#/products";
    mockCommands({
      app_status: () => ready(null),
      sort_keys: sortKeys,
      list_products: (args) => pageOf([product(1)], args, 1),
      take_pending_link: () => "#/transactions/t-1/events/e-1",
      get_transaction: () => {
        throw { kind: "server", message: "not found", hint: "", status: 404, errorCode: "NotFound" };
      },
      transaction_events: () => [],
    });
    render(<QueryClientProvider client={client()}><App /></QueryClientProvider>);
    await waitFor(() => expect(window.location.hash).toBe("#/transactions/t-1/events/e-1"));
    await emit("open-link", "#/products/p-9");
    await waitFor(() => expect(window.location.hash).toBe("#/products/p-9"));
  });
});
});
