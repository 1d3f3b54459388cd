/**
 * The React side of start-up, loaded by `main.tsx` as its own chunk so the start-up requests
 * are already on their way while this (most of the bundle) is fetched and compiled.
 */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { markStartup, seedQueries, type FirstRequests } from "./startup";

export function mount(element: HTMLElement, first: FirstRequests): void {
  markStartup("react-loaded");
  const client = new QueryClient({
    defaultOptions: { queries: { staleTime: 10_000, refetchOnWindowFocus: false, retry: false } },
  });
  void seedQueries(client, first);
  createRoot(element).render(
    <StrictMode>
      <QueryClientProvider client={client}>
        <App />
      </QueryClientProvider>
    </StrictMode>,
  );
}
