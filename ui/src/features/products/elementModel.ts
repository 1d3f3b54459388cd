/**
 * Subscriptions a service shows without a `subscriptionId` (the spec's subscription has none):
 * the Product screen names them by url and resource, as the shell told it (`ElementKeys`), and
 * says of each whether the listener has bound it to the id its first notification named.
 */
import type { ElementKeys, SubscriptionView } from "../../platform";

/** Where a subscription shown without an id stands with the listener. */
export type Binding = "bound" | "waiting" | "no-key";

/**
 * Bound: a notification verified with its key and named its id. Waiting: its key is here and no
 * notification has come yet. No key: the listener has nothing to verify (or bind) it with.
 */
export function bindingOf(keys: ElementKeys): Binding {
  if (keys.boundId) return "bound";
  return keys.hasCurrent ? "waiting" : "no-key";
}

/** Whether the screen asks the shell about it by url and resource: no id, but both shown. */
export function namedByElement(subscription: SubscriptionView): subscription is SubscriptionView & { url: string; resource: string } {
  return !subscription.subscriptionId && !!subscription.url && !!subscription.resource;
}

/** The cache key of one element's answer; every element of a product starts with the first two. */
export function elementQueryKey(productId: string, subscription: { url: string; resource: string }) {
  return ["elementKeys", productId, subscription.url, subscription.resource] as const;
}

/** How a person reads an element: `url (resource)`, the resource without its common prefix. */
export function elementLabel(subscription: { url: string; resource: string }): string {
  return `${subscription.url} (${subscription.resource.replace("urn:svc:partner:", "")})`;
}

/** One sentence of how many are bound, waiting, or keyless; empty when there is none. */
export function bindingSummary(all: ElementKeys[]): string {
  const count = (b: Binding) => all.filter((k) => bindingOf(k) === b).length;
  const [bound, waiting, keyless] = [count("bound"), count("waiting"), count("no-key")];
  const parts: string[] = [];
  if (bound) parts.push(`${bound} bound by the listener`);
  if (waiting) parts.push(`${waiting} waiting for ${waiting === 1 ? "its" : "their"} first notification`);
  if (keyless) parts.push(`${keyless} with no key here (rotate ${keyless === 1 ? "it" : "one"} to keep a key here)`);
  return parts.length ? `${parts.join(", ")}.` : "";
}
