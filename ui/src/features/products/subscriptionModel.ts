/**
 * Editing a webhook subscription: the form starts from what the server shows, and only the
 * fields the user changed are sent (the rest go as null, "leave it"), so an edit never
 * rewrites a field with a stale copy of itself.
 */
import type { EventType, ResourceType, Subscription, SubscriptionChangeForm, SubscriptionView } from "../../platform";

export const RESOURCES: ResourceType[] = ["urn:svc:partner:transaction", "urn:svc:partner:transaction:event"];
export const EVENTS: EventType[] = ["created", "updated"];

export interface SubscriptionDraft {
  url: string;
  events: EventType[];
  resource: ResourceType;
}

/** The subscriptions the service named: only those can be edited, checked, rotated or deleted. */
export function addressable(webhooks: SubscriptionView[]): Subscription[] {
  return webhooks.filter((w): w is Subscription => typeof w.subscriptionId === "string" && w.subscriptionId !== "");
}

/** The resource as the service wrote it: one the form knows, or the transaction resource when it is absent. */
function resourceOf(subscription: SubscriptionView): ResourceType {
  return (subscription.resource ?? RESOURCES[0]) as ResourceType;
}

export function draftOf(subscription: Subscription): SubscriptionDraft {
  return { url: subscription.url ?? "", events: canonicalEvents(subscription.events as EventType[]), resource: resourceOf(subscription) };
}

/** Events in one order, each once: two drafts with the same events compare equal. */
export function canonicalEvents(events: EventType[]): EventType[] {
  return EVENTS.filter((e) => events.includes(e));
}

export function toggleEvent(events: EventType[], event: EventType): EventType[] {
  return canonicalEvents(events.includes(event) ? events.filter((e) => e !== event) : [...events, event]);
}

/** The draft's problems in words, by field; the server checks the URL again (https in production). */
export function subscriptionDraftProblems(draft: SubscriptionDraft): Partial<Record<"url" | "events", string>> {
  const problems: Partial<Record<"url" | "events", string>> = {};
  try {
    const url = new URL(draft.url.trim());
    if (url.protocol !== "https:" && url.protocol !== "http:") problems.url = "Use an http(s):// address.";
  } catch {
    problems.url = "Type the callback URL, e.g. https://abc.example.app/webhooks.";
  }
  if (draft.events.length === 0) problems.events = "Pick at least one event.";
  return problems;
}

/** The change to send: only what differs from the subscription; none when nothing does. */
export function subscriptionChange(productId: string, original: Subscription, draft: SubscriptionDraft): SubscriptionChangeForm | null {
  const url = draft.url.trim();
  const events = canonicalEvents(draft.events);
  const change: SubscriptionChangeForm = {
    productId,
    subscriptionId: original.subscriptionId,
    url: url !== original.url ? url : null,
    events: events.join() !== canonicalEvents(original.events as EventType[]).join() ? events : null,
    resource: draft.resource !== resourceOf(original) ? draft.resource : null,
  };
  return change.url === null && change.events === null && change.resource === null ? null : change;
}
