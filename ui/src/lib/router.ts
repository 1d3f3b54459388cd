/**
 * A tiny hash router: `#/products`, `#/products/<id>`, `#/transactions/<id>`, … A hash keeps
 * links (an inspector row opening its transaction) working in the embedded webview with no
 * server behind it.
 */
import { useSyncExternalStore } from "react";

export type Screen =
  | "connections"
  | "token"
  | "products"
  | "transactions"
  | "webhooks"
  | "demo"
  | "support"
  | "calls"
  | "audit";

export interface Route {
  screen: Screen;
  id: string | null;
  /** `#/transactions/<id>/events/<event id>`: the event to show within its transaction. */
  eventId: string | null;
}

export const SCREENS: Array<{ screen: Screen; label: string; key: string }> = [
  { screen: "products", label: "Products", key: "1" },
  { screen: "transactions", label: "Transactions", key: "2" },
  { screen: "webhooks", label: "Webhooks", key: "3" },
  { screen: "token", label: "Token", key: "4" },
  { screen: "connections", label: "Connections", key: "5" },
  { screen: "demo", label: "Demo", key: "6" },
  { screen: "support", label: "Support", key: "7" },
  { screen: "calls", label: "Calls", key: "8" },
  { screen: "audit", label: "Audit log", key: "9" },
];

/** The digit that opens `screen` with the screen shortcut (Alt+digit, ⌥digit on a Mac). */
export function screenKey(screen: Screen): string {
  return SCREENS.find((s) => s.screen === screen)?.key ?? "";
}

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  const screen = SCREENS.find((s) => s.screen === parts[0])?.screen ?? "products";
  const id = parts[1] ? decodeURIComponent(parts[1]) : null;
  const eventId = screen === "transactions" && id && parts[2] === "events" && parts[3] ? decodeURIComponent(parts[3]) : null;
  return { screen, id, eventId };
}

export function routeHref(screen: Screen, id?: string | null, eventId?: string | null): string {
  if (!id) return `#/${screen}`;
  const base = `#/${screen}/${encodeURIComponent(id)}`;
  return eventId ? `${base}/events/${encodeURIComponent(eventId)}` : base;
}

export function navigate(screen: Screen, id?: string | null, eventId?: string | null): void {
  window.location.hash = routeHref(screen, id, eventId);
}

function subscribe(callback: () => void): () => void {
  window.addEventListener("hashchange", callback);
  return () => window.removeEventListener("hashchange", callback);
}

export function useRoute(): Route {
  const hash = useSyncExternalStore(subscribe, () => window.location.hash);
  return parseRoute(hash);
}
