import { useMutation, useQueries, useQuery, useQueryClient, type UseQueryResult } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { api, events, toCommandError, type ElementKeys, type EventType, type Product, type ResourceType, type ShownOnceKey, type Subscription, type SubscriptionView } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { CopyLinkButton } from "../../components/CopyLink";
import { RecordView } from "../../components/JsonView";
import { formatTime, shortId } from "../../lib/format";
import { Id } from "../../components/Id";
import { navigate } from "../../lib/router";
import { KeyField, useKeyChoice } from "./KeyField";
import { ReceiverCheck } from "../../components/ReceiverCheck";
import { ShownOnce } from "./ShownOnce";
import { addressable, draftOf, EVENTS, RESOURCES, subscriptionChange, subscriptionDraftProblems, toggleEvent, type SubscriptionDraft } from "./subscriptionModel";
import { bindingOf, bindingSummary, elementLabel, elementQueryKey, namedByElement, type Binding } from "./elementModel";

/**
 * What the user is doing to one subscription: one at a time, under the table. `subscriptionId`
 * is how the shell names it: its id, or for one the service shows without an id, the
 * `RESOURCE=URL` the shell gave (`ElementKeys.subscription`); `label` is how the screen says it.
 */
type SubscriptionAction = { kind: "rotate" | "edit" | "delete" | "check"; subscriptionId: string; label: string; element?: SubscriptionView & { url: string; resource: string } };

export function ProductDetail({ id }: { id: string }) {
  const product = useQuery({ queryKey: ["product", id], queryFn: () => api.getProduct(id), retry: false });
  const [shown, setShown] = useState<ShownOnceKey | null>(null);
  const [action, setAction] = useState<SubscriptionAction | null>(null);
  const [adding, setAdding] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const act = (kind: SubscriptionAction["kind"], subscriptionId: string, label = shortId(subscriptionId), element?: SubscriptionAction["element"]) => {
    setDone(null);
    setAction({ kind, subscriptionId, label, element });
  };
  const client = useQueryClient();
  // Subscriptions the service shows without an id: the shell says what the keychain holds for
  // each, the id the listener bound to it, and the name to change it by.
  const named = (product.data?.webhooks ?? []).filter(namedByElement);
  const elementKeys = useQueries({
    queries: named.map((w) => ({ queryKey: elementQueryKey(id, w), queryFn: () => api.elementKeys(id, w.url, w.resource), retry: false })),
  });
  const waiting = elementKeys.some((q) => q.data !== undefined && bindingOf(q.data) === "waiting");
  // The listener binds one at its first notification: each capture that arrives may be it.
  useEffect(() => {
    if (!waiting) return;
    const refresh = () => void client.invalidateQueries({ queryKey: ["elementKeys", id] });
    return events.onCaptures(refresh, refresh);
  }, [waiting, id, client]);

  if (product.isError) {
    return (
      <div className="page">
        <button type="button" className="link" onClick={() => navigate("products")}>← Products</button>
        <ErrorPanel error={product.error} onRetry={() => void product.refetch()} />
      </div>
    );
  }
  if (!product.data) return <div className="page muted">Loading product…</div>;
  const p = product.data;
  const keysOf = (w: SubscriptionView) => {
    const at = named.indexOf(w as (typeof named)[number]);
    return at < 0 ? undefined : elementKeys[at];
  };
  const withoutIds = p.webhooks.some((w) => !w.subscriptionId);
  const summary = bindingSummary(elementKeys.flatMap((q) => (q.data ? [q.data] : [])));

  return (
    <div className="page">
      <div className="toolbar">
        <button type="button" className="link" onClick={() => navigate("products")}>← Products</button>
        <h1>{p.listingName ?? p.name ?? p.id}</h1>
        {p.status && <span className={`pill ${p.status}`}>{p.status}</span>}
        <span className="muted small">{p.name ?? "—"} · <Id value={p.id} /></span>
        <CopyLinkButton screen="products" id={p.id} />
      </div>
      {shown && <ShownOnce shown={shown} onDone={() => setShown(null)} />}
      <div className="columns stack-narrow">
        <section className="card grow">
          <div className="card-head">
            <h2>Webhook subscriptions</h2>
            <button type="button" onClick={() => setAdding(true)} disabled={adding}>Add subscription</button>
          </div>
          {adding && <AddSubscription productId={p.id} onDone={(k) => { setAdding(false); if (k) setShown(k); }} />}
          {withoutIds && (
            <p className="muted small no-ids-note" role="note" data-testid="no-ids-note">
              This service shows no subscription ids: its subscriptions are named here by URL and resource, each key kept in the
              keychain for that pair. The listener learns a subscription&apos;s id from the first notification that verifies with its key,
              and keeps it.{summary && <> <strong data-testid="binding-summary">{summary}</strong></>}
            </p>
          )}
          <table className="grid compact" aria-label="Subscriptions">
            <thead>
              <tr><th>Subscription</th><th>URL</th><th>Resource</th><th>Events</th><th>Keys</th><th></th></tr>
            </thead>
            <tbody>
              {p.webhooks.length === 0 && (
                <tr><td colSpan={6} className="empty">No subscriptions yet: add one pointing at the listener.</td></tr>
              )}
              {p.webhooks.map((w, index) => {
                const keys = keysOf(w);
                if (namedByElement(w) && keys) {
                  return <ElementRow key={`element-${w.url}-${w.resource}`} productId={p.id} subscription={w} keys={keys} act={act} />;
                }
                const id = w.subscriptionId ?? null;
                return (
                  <tr key={id ?? `unnamed-${index}`} data-subscription-id={id ?? undefined} data-url={w.url ?? undefined}>
                    <td className="mono" title={id ?? "The service names no subscriptionId for this subscription."}><Id value={id} compact /></td>
                    <td className="mono"><span className="cell-clip" title={w.url ?? undefined}>{w.url ?? "—"}</span></td>
                    <td>{(w.resource ?? "—").replace("urn:svc:partner:", "")}</td>
                    <td>{w.events.join(", ")}</td>
                    <td>{id ? <KeyStatus subscriptionId={id} /> : <span className="muted small">—</span>}</td>
                    <td>
                      {id ? (
                        <span className="row-actions">
                          <button type="button" data-testid={`subscription-check-${id}`} onClick={() => act("check", id)}>Check receiver</button>
                          <button type="button" onClick={() => act("rotate", id)}>Rotate key</button>
                          <button type="button" data-testid={`subscription-edit-${id}`} onClick={() => act("edit", id)}>Edit</button>
                          <button type="button" className="danger" data-testid={`subscription-delete-${id}`} onClick={() => act("delete", id)}>Delete</button>
                        </span>
                      ) : (
                        <span className="muted small">Not addressable: the service sent no subscriptionId</span>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {done && <p className="ok small" role="status" data-testid="subscription-done">{done}</p>}
          {action?.kind === "rotate" && (
            <RotateKey
              productId={p.id}
              subscriptionId={action.subscriptionId}
              label={action.label}
              onDone={(k) => {
                setAction(null);
                if (k) setShown(k);
              }}
            />
          )}
          {action?.kind === "edit" && (
            <EditSubscription
              key={action.subscriptionId}
              product={p}
              label={action.label}
              byElement={action.element !== undefined}
              subscription={action.element ? elementNamed(p.webhooks, action.element, action.subscriptionId) : addressable(p.webhooks).find((w) => w.subscriptionId === action.subscriptionId)}
              onDone={(message) => {
                setAction(null);
                setDone(message);
              }}
            />
          )}
          {action?.kind === "check" && (() => {
            const subscription = addressable(p.webhooks).find((w) => w.subscriptionId === action.subscriptionId);
            return subscription ? (
              <ReceiverCheck key={action.subscriptionId} productId={p.id} subscription={subscription} onClose={() => setAction(null)} />
            ) : null;
          })()}
          {action?.kind === "delete" && (
            <DeleteSubscription
              key={action.subscriptionId}
              productId={p.id}
              subscriptionId={action.subscriptionId}
              label={action.label}
              onDone={(message) => {
                setAction(null);
                setDone(message);
              }}
            />
          )}
        </section>
        <section className="card side">
          <h2>Product</h2>
          <p className="muted small">Created {formatTime(p.created)} by {p.createdBy ?? "—"} · updated {formatTime(p.updated)}</p>
          <RecordView value={p.document} title="Product fields" />
        </section>
      </div>
    </div>
  );
}

function KeyStatus({ subscriptionId }: { subscriptionId: string }) {
  const client = useQueryClient();
  const keys = useQuery({ queryKey: ["keys", subscriptionId], queryFn: () => api.subscriptionKeys(subscriptionId), retry: false });
  const retire = useMutation({
    mutationFn: () => api.retirePreviousKey(subscriptionId),
    onSuccess: (k) => client.setQueryData(["keys", subscriptionId], k),
  });
  if (keys.isError) return <span className="muted small">unknown</span>;
  if (!keys.data) return null;
  return (
    <span className="key-status">
      {keys.data.hasCurrent ? <span className="pill valid">in keychain</span> : <span className="pill warn">no key here</span>}
      {keys.data.hasPrevious && (
        <>
          <span className="pill muted-pill">previous verifies</span>
          <button type="button" className="link" onClick={() => retire.mutate()}>Retire previous</button>
        </>
      )}
    </span>
  );
}

/** The element still on the product with this url and resource, named as the shell named it. */
function elementNamed(webhooks: SubscriptionView[], element: { url: string; resource: string }, name: string): Subscription | undefined {
  const found = webhooks.filter(namedByElement).find((w) => w.url === element.url && w.resource === element.resource);
  return found ? { ...found, subscriptionId: name } : undefined;
}

const BINDING_WORDS: Record<Binding, { pill: string; className: string; line: string }> = {
  bound: { pill: "bound", className: "pill valid", line: "by the listener, from its first notification" },
  waiting: { pill: "not bound yet", className: "pill warn", line: "waits for its first notification" },
  "no-key": { pill: "not bound", className: "pill muted-pill", line: "no key here to verify it with" },
};

/**
 * A subscription the service shows without an id: named by url and resource, with the id the
 * listener bound to it (or that it still waits for its first notification), its keys, and the
 * same actions as one with an id (but the receiver check, which signs as a named subscription).
 */
function ElementRow({
  productId,
  subscription: w,
  keys,
  act,
}: {
  productId: string;
  subscription: SubscriptionView & { url: string; resource: string };
  keys: UseQueryResult<ElementKeys>;
  act: (kind: SubscriptionAction["kind"], subscriptionId: string, label: string, element: SubscriptionAction["element"]) => void;
}) {
  const known = keys.data;
  const binding = known ? bindingOf(known) : undefined;
  const words = binding ? BINDING_WORDS[binding] : undefined;
  const failure = keys.isError ? toCommandError(keys.error) : null;
  const label = elementLabel(w);
  return (
    <tr data-url={w.url} data-resource={w.resource} data-binding={binding} data-bound-id={known?.boundId ?? undefined}>
      <td>
        {words && known ? (
          <span className="binding" data-testid="binding" title={binding === "bound" ? `Bound to ${known.boundId}: ${words.line}.` : `${words.pill}: ${words.line}.`}>
            {known.boundId && <Id value={known.boundId} compact className="mono" />}
            <span className={words.className}>{words.pill}</span>
            <span className="muted small">{words.line}</span>
          </span>
        ) : failure ? (
          <span className="muted small">—</span>
        ) : (
          <span className="muted small">…</span>
        )}
      </td>
      <td className="mono"><span className="cell-clip" title={w.url}>{w.url}</span></td>
      <td>{w.resource.replace("urn:svc:partner:", "")}</td>
      <td>{w.events.join(", ")}</td>
      <td>{known ? <ElementKeyStatus productId={productId} keys={known} /> : failure?.kind === "keychain" ? <span className="muted small" title={failure.message}>unknown</span> : <span className="muted small">—</span>}</td>
      <td>
        {known ? (
          <span className="row-actions">
            <button type="button" data-testid="element-rotate" onClick={() => act("rotate", known.subscription, label, w)}>Rotate key</button>
            <button type="button" data-testid="element-edit" onClick={() => act("edit", known.subscription, label, w)}>Edit</button>
            <button type="button" className="danger" data-testid="element-delete" onClick={() => act("delete", known.subscription, label, w)}>Delete</button>
          </span>
        ) : failure?.kind === "invalidInput" ? (
          <span className="muted small" title={failure.hint}>Not addressable: {failure.message}</span>
        ) : failure ? (
          <span className="muted small" title={failure.hint}>{failure.message}</span>
        ) : null}
      </td>
    </tr>
  );
}

/** The keys kept for a subscription shown without an id, and "Retire previous" while one verifies. */
function ElementKeyStatus({ productId, keys }: { productId: string; keys: ElementKeys }) {
  const client = useQueryClient();
  const retire = useMutation({
    mutationFn: () => api.retirePreviousElementKey(productId, keys.url, keys.resource),
    onSuccess: (k) => client.setQueryData(elementQueryKey(productId, k), k),
  });
  return (
    <span className="key-status">
      {keys.hasCurrent ? <span className="pill valid">in keychain</span> : <span className="pill warn">no key here</span>}
      {keys.hasPrevious && (
        <>
          <span className="pill muted-pill">previous verifies</span>
          <button type="button" className="link" onClick={() => retire.mutate()} disabled={retire.isPending}>Retire previous</button>
        </>
      )}
      {retire.isError && <span className="field-error small" role="alert">{toCommandError(retire.error).message}</span>}
    </span>
  );
}

function RotateKey({ productId, subscriptionId, label, onDone }: { productId: string; subscriptionId: string; label: string; onDone: (k: ShownOnceKey | null) => void }) {
  const key = useKeyChoice();
  const rotate = useMutation({
    mutationFn: () => api.rotateSigningKey({ productId, subscriptionId, signingKey: key.keyToSend }),
    onSuccess: (k) => {
      key.clear();
      onDone(k);
    },
  });
  return (
    <form
      className="card form-card"
      aria-label="Rotate signing key"
      onSubmit={(e) => {
        e.preventDefault();
        rotate.mutate();
      }}
    >
      <h3>Rotate the signing key of {label}</h3>
      <KeyField keyChoice={key} />
      {rotate.isError && <ErrorPanel error={rotate.error} compact />}
      <div className="actions">
        <button type="submit" className="primary" disabled={rotate.isPending || !key.canSubmit}>Rotate</button>
        <button type="button" onClick={() => onDone(null)}>Cancel</button>
      </div>
    </form>
  );
}

/** Changes a subscription's URL, events or resource; its signing key stays as it is. */
function EditSubscription({
  product,
  subscription,
  label,
  byElement,
  onDone,
}: {
  product: Product;
  subscription: Subscription | undefined;
  label: string;
  byElement: boolean;
  onDone: (message: string | null) => void;
}) {
  const [draft, setDraft] = useState<SubscriptionDraft | null>(subscription ? draftOf(subscription) : null);
  const save = useMutation({
    mutationFn: api.updateSubscription,
    onSuccess: (saved) => {
      onDone(
        byElement && saved.url && saved.resource
          ? `Subscription ${elementLabel({ url: saved.url, resource: saved.resource })} saved.`
          : `Subscription ${shortId(saved.subscriptionId)} saved.`,
      );
    },
  });
  if (!subscription || !draft) {
    return <p className="muted small">That subscription is no longer on this product.</p>;
  }
  const problems = subscriptionDraftProblems(draft);
  const change = subscriptionChange(product.id, subscription, draft);
  return (
    <form
      className="card form-card"
      aria-label="Edit subscription"
      onSubmit={(e) => {
        e.preventDefault();
        if (change && Object.keys(problems).length === 0) save.mutate(change);
      }}
    >
      <h3>Edit subscription {byElement ? <span className="mono">{label}</span> : <Id value={subscription.subscriptionId} className="mono" />}</h3>
      <div className="form-row">
        <label className="grow">Callback URL
          <input value={draft.url} onChange={(e) => setDraft({ ...draft, url: e.target.value })} aria-invalid={problems.url !== undefined} data-testid="subscription-url-input" />
          {problems.url && <span className="field-error small">{problems.url}</span>}
        </label>
        <label>Resource
          <select value={draft.resource} onChange={(e) => setDraft({ ...draft, resource: e.target.value as ResourceType })} data-testid="subscription-resource-select">
            {RESOURCES.map((r) => <option key={r} value={r}>{r.replace("urn:svc:partner:", "")}</option>)}
          </select>
        </label>
        <fieldset className="inline-set">
          <legend>Events</legend>
          {EVENTS.map((e) => (
            <label key={e} className="inline"><input type="checkbox" checked={draft.events.includes(e)} onChange={() => setDraft({ ...draft, events: toggleEvent(draft.events, e) })} />{e}</label>
          ))}
          {problems.events && <span className="field-error small">{problems.events}</span>}
        </fieldset>
      </div>
      <p className="muted small">
        The signing key stays as it is{change === null ? "; nothing is changed yet." : "."}
        {byElement && change !== null && (change.url !== null || change.resource !== null) && (
          <span data-testid="element-move-note">
            {" "}This service names subscriptions by URL and resource: a new one makes it another subscription there, sent with the key kept
            here, and the listener learns its new id from its first notification.
          </span>
        )}
      </p>
      {save.isError && <ErrorPanel error={save.error} compact />}
      <div className="actions">
        <button type="submit" className="primary" disabled={save.isPending || change === null || Object.keys(problems).length > 0}>
          {save.isPending ? "Saving…" : "Save subscription"}
        </button>
        <button type="button" onClick={() => onDone(null)}>Cancel</button>
      </div>
    </form>
  );
}

/** Deletes a subscription after the user confirms; the shell removes its keys from the keychain. */
function DeleteSubscription({ productId, subscriptionId, label, onDone }: { productId: string; subscriptionId: string; label: string; onDone: (message: string | null) => void }) {
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: () => api.deleteSubscription(productId, subscriptionId),
    onSuccess: (product) => {
      client.setQueryData(["product", productId], product);
      client.removeQueries({ queryKey: ["keys", subscriptionId] });
      onDone(`Subscription ${label} deleted; its signing keys were removed from the keychain.`);
    },
    // Deleted on the server but its keys left behind, say: the product is read again either way.
    onError: () => void client.invalidateQueries({ queryKey: ["product", productId] }),
  });
  return (
    <div className="confirm-bar" role="alertdialog" aria-label="Delete subscription" data-testid="subscription-delete-confirm">
      <span>
        <strong>Delete subscription {label === shortId(subscriptionId) ? <Id value={subscriptionId} className="mono" /> : <span className="mono">{label}</span>}?</strong> The server stops sending its notifications, and its
        signing keys are removed from the keychain.
      </span>
      <button type="button" className="primary danger-fill" onClick={() => remove.mutate()} disabled={remove.isPending}>
        {remove.isPending ? "Deleting…" : "Delete subscription"}
      </button>
      <button type="button" onClick={() => onDone(null)} disabled={remove.isPending}>Cancel</button>
      {remove.isError && <ErrorPanel error={remove.error} compact />}
    </div>
  );
}

function AddSubscription({ productId, onDone }: { productId: string; onDone: (k: ShownOnceKey | null) => void }) {
  const listener = useQuery({ queryKey: ["listener"], queryFn: api.listenerStatus, retry: false });
  const [url, setUrl] = useState<string | null>(null);
  const [resource, setResource] = useState<ResourceType>("urn:svc:partner:transaction");
  const [events, setEvents] = useState<EventType[]>(["created", "updated"]);
  const key = useKeyChoice();
  const effectiveUrl = url ?? listener.data?.callbackUrl ?? "";
  const add = useMutation({
    mutationFn: () => api.addSubscription({ productId, url: effectiveUrl, events, resource, signingKey: key.keyToSend }),
    onSuccess: (k) => {
      key.clear();
      onDone(k);
    },
  });
  const toggle = (e: EventType) => setEvents((cur) => (cur.includes(e) ? cur.filter((x) => x !== e) : [...cur, e]));
  return (
    <form
      className="card form-card"
      aria-label="Add subscription"
      onSubmit={(e) => {
        e.preventDefault();
        add.mutate();
      }}
    >
      <h3>Add a subscription</h3>
      <div className="form-row">
        <label className="grow">Callback URL (the tunnel URL, or the loopback listener)
          <input value={effectiveUrl} onChange={(e) => setUrl(e.target.value)} required />
        </label>
        <label>Resource
          <select value={resource} onChange={(e) => setResource(e.target.value as ResourceType)}>
            {RESOURCES.map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        </label>
        <fieldset className="inline-set">
          <legend>Events</legend>
          {(["created", "updated"] as EventType[]).map((e) => (
            <label key={e} className="inline"><input type="checkbox" checked={events.includes(e)} onChange={() => toggle(e)} />{e}</label>
          ))}
        </fieldset>
      </div>
      <KeyField keyChoice={key} />
      {add.isError && <ErrorPanel error={add.error} compact />}
      <div className="actions">
        <button type="submit" className="primary" disabled={add.isPending || events.length === 0 || !key.canSubmit}>Add</button>
        <button type="button" onClick={() => onDone(null)}>Cancel</button>
      </div>
    </form>
  );
}
