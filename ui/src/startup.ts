/**
 * What the UI asks the shell for before React's first render. Left to the components, each
 * call would wait for a render, a paint and an effect before it is even sent (status, then the
 * products page); asked here, the status call runs while React renders its first frame, and the
 * first products page is asked for the moment the status says a connection is active, so the
 * products table can show rows on its first render. The components use the same query keys,
 * so they pick up these answers instead of asking again.
 */
import type { QueryClient } from "@tanstack/react-query";
import { api, type AppStatus } from "./platform";
import { parseRoute } from "./lib/router";
import { prefetchProducts } from "./features/products/ProductsScreen";

export const STATUS_KEY = ["status"] as const;

export async function startLoading(client: QueryClient, hash: string): Promise<void> {
  await client.prefetchQuery({ queryKey: STATUS_KEY, queryFn: api.appStatus });
  const status = client.getQueryData<AppStatus>(STATUS_KEY);
  const route = parseRoute(hash);
  const onProducts = route.screen === "products" && route.id === null;
  // While the shell is still starting, the App waits for it (`waitForStart`) and the table
  // asks for its page when it mounts.
  if (status?.phase === "ready" && status.active !== null && onProducts) {
    await prefetchProducts(client);
  }
}
