import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { emit } from "@tauri-apps/api/event";
import { describe, expect, it } from "vitest";
import { mockCommands, renderWithClient } from "../../test/render";
import { product } from "../../test/fixtures";
import type { ElementKeys, Product, SubscriptionView } from "../../platform";
import { ProductDetail } from "./ProductDetail";
import { bindingSummary } from "./elementModel";

const TX = "urn:svc:partner:transaction";
const LISTENER = "http://127.0.0.1:7070/webhooks";
const ELSEWHERE = "https://hooks.other.example/tx";

/** A product of a service that shows no `subscriptionId`: one subscription to the listener, one made elsewhere. */
function withoutIds(): Product {
  return {
    ...product(1),
    webhooks: [
      { url: LISTENER, events: ["created"], resource: TX },
      { url: ELSEWHERE, events: ["created", "updated"], resource: TX },
    ],
  };
}

function keys(url: string, over: Partial<ElementKeys> = {}): ElementKeys {
  return { subscription: `${TX}=${url}`, url, resource: TX, hasCurrent: true, hasPrevious: false, boundId: null, ...over };
}

const row = (url: string) => document.querySelector(`tr[data-url="${url}"]`) as HTMLElement;

describe("Product detail: a service that shows no subscription ids", () => {
  it("says which subscriptions the listener has bound and which wait, and shows the binding once a notification arrives", async () => {
    let bound: string | null = null;
    mockCommands({
      get_product: () => withoutIds(),
      element_keys: (a) => (a.url === LISTENER ? keys(LISTENER, { boundId: bound }) : keys(ELSEWHERE, { hasCurrent: false })),
    });
    renderWithClient(<ProductDetail id="p-1" />);
    const note = await screen.findByTestId("no-ids-note");
    expect(note).toHaveTextContent("This service shows no subscription ids");
    await waitFor(() => expect(screen.getByTestId("binding-summary")).toHaveTextContent("1 waiting for its first notification, 1 with no key here"));
    expect(row(LISTENER)).toHaveAttribute("data-binding", "waiting");
    expect(within(row(LISTENER)).getByText("not bound yet")).toBeInTheDocument();
    expect(within(row(LISTENER)).getByText("waits for its first notification")).toBeInTheDocument();
    expect(within(row(LISTENER)).getByText("in keychain")).toBeInTheDocument();
    expect(row(ELSEWHERE)).toHaveAttribute("data-binding", "no-key");
    expect(within(row(ELSEWHERE)).getByText("no key here")).toBeInTheDocument();
    // Every subscription can be changed by url and resource, but not checked (that signs as a named one).
    expect(within(row(ELSEWHERE)).getByRole("button", { name: "Rotate key" })).toBeInTheDocument();
    expect(screen.queryByText(/Not addressable/)).toBeNull();
    expect(screen.queryByRole("button", { name: "Check receiver" })).toBeNull();

    // The listener binds it at the first notification: a capture arrives, the screen asks again.
    bound = "whs-0000000000042";
    await emit("captures", { captures: [], dropped: 0 });
    await waitFor(() => expect(row(LISTENER)).toHaveAttribute("data-binding", "bound"));
    expect(row(LISTENER)).toHaveAttribute("data-bound-id", "whs-0000000000042");
    expect(within(row(LISTENER)).getByText("bound")).toBeInTheDocument();
    expect(screen.getByTestId("binding-summary")).toHaveTextContent("1 bound by the listener, 1 with no key here");
  });

  it("rotates by url and resource, shows the key once, and retires the previous key of that element", async () => {
    const newKey = "Abcdefghijklmnopqrstuvwxyz0123456789!";
    let current = keys(LISTENER, { boundId: "whs-1" });
    const calls = mockCommands({
      get_product: () => withoutIds(),
      element_keys: (a) => (a.url === LISTENER ? current : keys(ELSEWHERE)),
      rotate_signing_key: () => {
        current = { ...current, hasPrevious: true };
        return { subscriptionId: `${LISTENER} (transaction)`, key: newKey, previousStillVerifies: true };
      },
      retire_previous_element_key: () => {
        current = { ...current, hasPrevious: false };
        return current;
      },
    });
    renderWithClient(<ProductDetail id="p-1" />);
    await waitFor(() => expect(row(LISTENER)).toHaveAttribute("data-binding", "bound"));
    fireEvent.click(within(row(LISTENER)).getByTestId("element-rotate"));
    const form = screen.getByRole("form", { name: "Rotate signing key" });
    expect(form).toHaveTextContent(`Rotate the signing key of ${LISTENER} (transaction)`);
    fireEvent.click(within(form).getByRole("button", { name: "Rotate" }));
    expect(await screen.findByTestId("shown-key")).toHaveTextContent(newKey);
    expect(calls.find((c) => c.cmd === "rotate_signing_key")?.args).toEqual({ form: { productId: "p-1", subscriptionId: `${TX}=${LISTENER}`, signingKey: null } });
    fireEvent.click(screen.getByRole("button", { name: "Done" }));
    await waitFor(() => expect(document.body.textContent).not.toContain(newKey));

    fireEvent.click(await within(row(LISTENER)).findByRole("button", { name: "Retire previous" }));
    await waitFor(() => expect(within(row(LISTENER)).queryByText("previous verifies")).toBeNull());
    expect(calls.find((c) => c.cmd === "retire_previous_element_key")?.args).toEqual({ productId: "p-1", url: LISTENER, resource: TX });
  });

  it("edits and deletes by url and resource, and says a new url makes another subscription at this service", async () => {
    let current = withoutIds();
    const calls = mockCommands({
      get_product: () => current,
      element_keys: (a) => keys(a.url as string),
      update_subscription: (a) => {
        const form = a.form as { url: string | null };
        const [first, second] = current.webhooks as [SubscriptionView, SubscriptionView];
        const changed = { ...first, url: form.url ?? LISTENER };
        current = { ...current, webhooks: [changed, second] };
        return changed;
      },
      delete_subscription: () => {
        current = { ...current, webhooks: current.webhooks.slice(0, 1) };
        return current;
      },
    });
    renderWithClient(<ProductDetail id="p-1" />);
    await waitFor(() => expect(row(LISTENER)).toHaveAttribute("data-binding", "waiting"));
    fireEvent.click(within(row(LISTENER)).getByTestId("element-edit"));
    const form = screen.getByRole("form", { name: "Edit subscription" });
    expect(form).toHaveTextContent(`Edit subscription ${LISTENER} (transaction)`);
    fireEvent.change(within(form).getByLabelText("Callback URL"), { target: { value: `${LISTENER}?moved=1` } });
    expect(within(form).getByTestId("element-move-note")).toHaveTextContent("a new one makes it another subscription there");
    fireEvent.click(within(form).getByRole("button", { name: "Save subscription" }));
    expect(await screen.findByTestId("subscription-done")).toHaveTextContent(`Subscription ${LISTENER}?moved=1 (transaction) saved.`);
    expect(calls.find((c) => c.cmd === "update_subscription")?.args).toEqual({
      form: { productId: "p-1", subscriptionId: `${TX}=${LISTENER}`, url: `${LISTENER}?moved=1`, events: null, resource: null },
    });

    await waitFor(() => expect(row(ELSEWHERE)).toHaveAttribute("data-binding", "waiting"));
    fireEvent.click(within(row(ELSEWHERE)).getByTestId("element-delete"));
    const confirm = screen.getByTestId("subscription-delete-confirm");
    expect(confirm).toHaveTextContent(`Delete subscription ${ELSEWHERE} (transaction)?`);
    fireEvent.click(within(confirm).getByRole("button", { name: "Delete subscription" }));
    expect(await screen.findByTestId("subscription-done")).toHaveTextContent(`Subscription ${ELSEWHERE} (transaction) deleted`);
    expect(calls.find((c) => c.cmd === "delete_subscription")?.args).toEqual({ productId: "p-1", subscriptionId: `${TX}=${ELSEWHERE}` });
    await waitFor(() => expect(row(ELSEWHERE)).toBeNull());
  });

  it("says why a subscription cannot be named by url and resource, and offers nothing to change it by", async () => {
    mockCommands({
      get_product: () => ({ ...product(1), webhooks: [{ url: ELSEWHERE, events: ["created"], resource: "urn:svc:partner:transaction:document" }] }),
      element_keys: () => {
        throw { kind: "invalidInput", message: "This subscription shows no subscriptionId and its resource (urn:svc:partner:transaction:document) is not one the console knows, so it cannot be named by its url and resource.", hint: "Change it with the service's own tools.", status: null, errorCode: null };
      },
    });
    renderWithClient(<ProductDetail id="p-1" />);
    expect(await screen.findByText(/Not addressable: This subscription shows no subscriptionId/)).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Rotate key" })).toBeNull();
  });

  it("words the summary for one and for many", () => {
    expect(bindingSummary([])).toBe("");
    expect(bindingSummary([keys("a", { boundId: "x" }), keys("b", { boundId: "y" }), keys("c"), keys("d")])).toBe(
      "2 bound by the listener, 2 waiting for their first notification.",
    );
  });
});
