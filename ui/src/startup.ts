/**
 * What the UI asks the shell for before React is even loaded.
 *
 * Why: the entry module (`main.tsx`) is small and runs as soon as it is parsed, while React,
 * TanStack and the screens (most of the bundle) are still being fetched and compiled. Sent from
 * here, the status call and, once the status says a connection is active, the first products
 * page are answered in that time instead of after it, so the products table has its rows on its
 * first render. The components use the same query keys and pick these answers up instead of
 * asking again. Nothing here may import React or the screens: it would pull them into the entry.
 */
import type { QueryClient } from "@tanstack/react-query";
import { api, type AppStatus, type PageView, type Product } from "./platform";
import { parseRoute } from "./lib/router";
import { FIRST_PAGE, listingQueryKey } from "./lib/paging";

export const STATUS_KEY = ["status"] as const;

const marked = new Set<string>();

/**
 * Names a start-up milestone, once per page: a `performance.mark` (User Timing, nothing sent
 * anywhere) that tests/e2e/bench.mjs reads to say where the time before the first rows went.
 */
export function markStartup(milestone: "entry" | "status-answered" | "products-answered" | "react-loaded" | "first-rows-committed"): void {
  if (marked.has(milestone) || typeof performance === "undefined" || typeof performance.mark !== "function") return;
  marked.add(milestone);
  performance.mark(milestone);
}

/**
 * Of the status shown and one that just arrived, the newer. A status comes both as a
 * command's answer and as an event, and the webview does not keep their order: an answer
 * computed before a change can land after the event announcing it.
 */
export function newerStatus(shown: AppStatus | undefined, arrived: AppStatus): AppStatus {
  return shown !== undefined && shown.version > arrived.version ? shown : arrived;
}

/** Shows a status that arrived (a command's answer or an event), unless the one shown is newer. */
export function showStatus(client: QueryClient, arrived: AppStatus): void {
  client.setQueryData<AppStatus>(STATUS_KEY, (shown) => newerStatus(shown, arrived));
}

/**
 * Shows a status after a change that may touch everything on screen (another connection, a
 * reset sandbox, keys read again): every other query is asked again.
 */
export function showChangedStatus(client: QueryClient, arrived: AppStatus): void {
  showStatus(client, arrived);
  void client.invalidateQueries({ predicate: (q) => q.queryKey[0] !== STATUS_KEY[0] });
}

/** The products table's sort until the user picks another. */
export const PRODUCTS_DEFAULT_SORT = "listingName";

/** The start-up requests in flight. */
export interface FirstRequests {
  status: Promise<AppStatus>;
  /** The first products page, or null when it is not asked for (another screen, no connection yet). */
  products: Promise<PageView<Product> | null>;
}

// The screen's default, marked so: a service that does not sort by it answers in its own order.
const FIRST_PRODUCTS_QUERY = { ...FIRST_PAGE, sort: PRODUCTS_DEFAULT_SORT, defaultSort: true };

/** Sends the start-up requests now; a failure is left for the query that takes the answer. */
export function sendFirstRequests(hash: string): FirstRequests {
  const status = api.appStatus();
  status.then(() => markStartup("status-answered"), () => undefined);
  const route = parseRoute(hash);
  const onProducts = route.screen === "products" && route.id === null;
  // While the shell is still starting, the App waits for it (`waitForStart`) and the table
  // asks for its page when it mounts.
  const products = status.then(
    (s) => (s.phase === "ready" && s.active !== null && onProducts ? api.listProducts(FIRST_PRODUCTS_QUERY) : null),
    () => null,
  );
  products.then((page) => page !== null && markStartup("products-answered"), () => undefined);
  return { status, products };
}

/** Puts the start-up answers into the query cache under the keys the screens use. */
export async function seedQueries(client: QueryClient, first: FirstRequests): Promise<void> {
  await client.prefetchQuery({ queryKey: STATUS_KEY, queryFn: () => first.status });
  // A page not asked for, or a failed one, leaves no data: the table asks when it mounts and
  // shows what failed.
  const page = await first.products.catch(() => null);
  if (page !== null) {
    const { start, limit, sort } = FIRST_PRODUCTS_QUERY;
    client.setQueryData(listingQueryKey("products", start, limit, sort), page);
  }
}

/** Both steps at once (what the tests drive). */
export function startLoading(client: QueryClient, hash: string): Promise<void> {
  return seedQueries(client, sendFirstRequests(hash));
}

/** What the data on screen was read from: the active connection and the address serving it
 * (the embedded sandbox gets a new one when it is reset). `null` while none is active. */
export function connectionIdentity(status: AppStatus | undefined): string | null {
  return status?.active ? `${status.active.id}|${status.active.baseUrl}` : null;
}
