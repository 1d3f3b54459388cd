/**
 * The screens' tests' harness: the shell's commands mocked by name (`mockCommands`, under the one
 * layer the UI calls through) and a screen rendered in a fresh query client that applies the
 * commands' declared invalidations as `App` does (`renderWithClient`).
 */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render } from "@testing-library/react";
import { mockIPC } from "@tauri-apps/api/mocks";
import type { ReactElement, ReactNode } from "react";
import { useDeclaredInvalidations } from "../lib/useDeclaredInvalidations";

export type Handler = (args: Record<string, unknown>) => unknown;

/** Mocks the shell's commands by name: an unknown command rejects like a missing one would. */
export function mockCommands(handlers: Record<string, Handler>, calls: Array<{ cmd: string; args: Record<string, unknown> }> = []) {
  // Events are mocked too: a test can `emit` one to the listeners the UI registered.
  mockIPC((cmd, args) => {
    calls.push({ cmd, args: (args ?? {}) as Record<string, unknown> });
    const handler = handlers[cmd];
    if (!handler) throw { kind: "internal", message: `no mock for ${cmd}`, hint: "", status: null, errorCode: null };
    return handler((args ?? {}) as Record<string, unknown>);
  }, { shouldMockEvents: true });
  return calls;
}

/** The declared invalidations, as `App` applies them, for a screen rendered alone. */
function Invalidations({ children }: { children: ReactNode }) {
  useDeclaredInvalidations();
  return children;
}

export function renderWithClient(ui: ReactElement) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity }, mutations: { retry: false } } });
  const within = (node: ReactElement) => (
    <QueryClientProvider client={client}>
      <Invalidations>{node}</Invalidations>
    </QueryClientProvider>
  );
  const view = render(within(ui));
  // `rerender` replaces the whole tree: a test re-renders inside the same client.
  return { ...view, client, rerenderWithClient: (next: ReactElement) => view.rerender(within(next)) };
}
