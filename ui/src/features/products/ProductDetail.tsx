import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type EventType, type Product, type ResourceType, type ShownOnceKey, type Subscription } from "../../platform";
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

/** What the user is doing to one subscription: one at a time, under the table. */
type SubscriptionAction = { kind: "rotate" | "edit" | "delete" | "check"; subscriptionId: string };

export function ProductDetail({ id }: { id: string }) {
  const product = useQuery({ queryKey: ["product", id], queryFn: () => api.getProduct(id), retry: false });
  const [shown, setShown] = useState<ShownOnceKey | null>(null);
  const [action, setAction] = useState<SubscriptionAction | null>(null);
  const [adding, setAdding] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const act = (kind: SubscriptionAction["kind"], subscriptionId: string) => {
    setDone(null);
    setAction({ kind, subscriptionId });
  };

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
          <table className="grid compact" aria-label="Subscriptions">
            <thead>
              <tr><th>Subscription</th><th>URL</th><th>Resource</th><th>Events</th><th>Keys</th><th></th></tr>
            </thead>
            <tbody>
              {p.webhooks.length === 0 && (
                <tr><td colSpan={6} className="empty">No subscriptions yet: add one pointing at the listener.</td></tr>
              )}
              {p.webhooks.map((w, index) => {
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
              subscription={addressable(p.webhooks).find((w) => w.subscriptionId === action.subscriptionId)}
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

function RotateKey({ productId, subscriptionId, onDone }: { productId: string; subscriptionId: string; onDone: (k: ShownOnceKey | null) => void }) {
  const key = useKeyChoice();
  const client = useQueryClient();
  const rotate = useMutation({
    mutationFn: () => api.rotateSigningKey({ productId, subscriptionId, signingKey: key.keyToSend }),
    onSuccess: (k) => {
      key.clear();
      void client.invalidateQueries({ queryKey: ["keys", subscriptionId] });
      void client.invalidateQueries({ queryKey: ["product", productId] });
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
      <h3>Rotate the signing key of {subscriptionId}</h3>
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
function EditSubscription({ product, subscription, onDone }: { product: Product; subscription: Subscription | undefined; onDone: (message: string | null) => void }) {
  const client = useQueryClient();
  const [draft, setDraft] = useState<SubscriptionDraft | null>(subscription ? draftOf(subscription) : null);
  const save = useMutation({
    mutationFn: api.updateSubscription,
    onSuccess: (saved) => {
      void client.invalidateQueries({ queryKey: ["product", product.id] });
      onDone(`Subscription ${shortId(saved.subscriptionId)} saved.`);
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
      <h3>Edit subscription <Id value={subscription.subscriptionId} className="mono" /></h3>
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
      <p className="muted small">The signing key stays as it is{change === null ? "; nothing is changed yet." : "."}</p>
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
function DeleteSubscription({ productId, subscriptionId, onDone }: { productId: string; subscriptionId: string; onDone: (message: string | null) => void }) {
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: () => api.deleteSubscription(productId, subscriptionId),
    onSuccess: (product) => {
      client.setQueryData(["product", productId], product);
      client.removeQueries({ queryKey: ["keys", subscriptionId] });
      onDone(`Subscription ${shortId(subscriptionId)} deleted; its signing keys were removed from the keychain.`);
    },
    // Deleted on the server but its keys left behind, say: the product is read again either way.
    onError: () => void client.invalidateQueries({ queryKey: ["product", productId] }),
  });
  return (
    <div className="confirm-bar" role="alertdialog" aria-label="Delete subscription" data-testid="subscription-delete-confirm">
      <span>
        <strong>Delete subscription <Id value={subscriptionId} className="mono" />?</strong> The server stops sending its notifications, and its
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
  const client = useQueryClient();
  const effectiveUrl = url ?? listener.data?.callbackUrl ?? "";
  const add = useMutation({
    mutationFn: () => api.addSubscription({ productId, url: effectiveUrl, events, resource, signingKey: key.keyToSend }),
    onSuccess: (k) => {
      key.clear();
      void client.invalidateQueries({ queryKey: ["product", productId] });
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
