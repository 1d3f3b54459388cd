import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type DemoOutcome } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { formatTime } from "../../lib/format";
import { navigate } from "../../lib/router";
import { appendOutcome, CLOCK_STEPS } from "./demoModel";

/** Play the lender against the embedded sandbox, so every webhook flow can be shown live. */
export function DemoScreen({ embedded }: { embedded: boolean }) {
  const client = useQueryClient();
  const products = useQuery({ queryKey: ["listing", "products", 0, 50, "listingName"], queryFn: () => api.listProducts({ start: 0, limit: 50, sort: "listingName" }), enabled: embedded });
  const [productId, setProductId] = useState<string>("");
  const [transactionId, setTransactionId] = useState<string>("");
  const [eventText, setEventText] = useState("Appraisal documents uploaded");
  const [log, setLog] = useState<DemoOutcome[]>([]);
  const done = (o: DemoOutcome) => {
    setLog((l) => appendOutcome(l, o));
    if (o.transactionId) setTransactionId(o.transactionId);
    void client.invalidateQueries({ queryKey: ["listing", "transactions"] });
    void client.invalidateQueries({ queryKey: ["token"] });
  };
  const chosenProduct = productId || products.data?.items.find((p) => p.webhooks.length > 0)?.id || products.data?.items[0]?.id || "";
  const newTx = useMutation({ mutationFn: () => api.demoNewTransaction(chosenProduct), onSuccess: done });
  const update = useMutation({ mutationFn: () => api.demoUpdateTransaction(transactionId), onSuccess: done });
  const custom = useMutation({ mutationFn: () => api.demoCustomEvent(transactionId, eventText), onSuccess: done });
  const clock = useMutation({ mutationFn: (m: number) => api.demoAdvanceClock(m), onSuccess: done });

  if (!embedded) {
    return (
      <div className="page">
        <h1>Demo</h1>
        <div className="notice">The demo controls play the lender on the embedded sandbox. Switch to the embedded sandbox connection in Connections to use them.</div>
      </div>
    );
  }
  return (
    <div className="page">
      <div className="toolbar"><h1>Demo — play the lender</h1></div>
      {products.isError && <ErrorPanel error={products.error} onRetry={() => void products.refetch()} />}
      <div className="columns">
        <section className="card">
          <h2>Transactions</h2>
          <label>Product
            <select aria-label="Demo product" value={chosenProduct} onChange={(e) => setProductId(e.target.value)}>
              {products.data?.items.map((p) => <option key={p.id} value={p.id}>{p.listingName} ({p.webhooks.length} hooks)</option>)}
            </select>
          </label>
          <div className="actions">
            <button type="button" className="primary" onClick={() => newTx.mutate()} disabled={!chosenProduct || newTx.isPending}>New transaction</button>
          </div>
          <label>Transaction
            <input aria-label="Demo transaction" value={transactionId} onChange={(e) => setTransactionId(e.target.value)} placeholder="created above, or paste an id" className="mono" />
          </label>
          <div className="actions">
            <button type="button" onClick={() => update.mutate()} disabled={!transactionId || update.isPending}>Lender updates it</button>
            {transactionId && <button type="button" className="link" onClick={() => navigate("transactions", transactionId)}>Open</button>}
          </div>
          <label>Custom event text<input aria-label="Custom event text" value={eventText} onChange={(e) => setEventText(e.target.value)} /></label>
          <div className="actions">
            <button type="button" onClick={() => custom.mutate()} disabled={!transactionId || !eventText.trim() || custom.isPending}>Send custom event</button>
          </div>
          {[newTx, update, custom].map((m, i) => (m.isError ? <ErrorPanel key={i} error={m.error} compact /> : null))}
        </section>
        <section className="card">
          <h2>Sandbox clock</h2>
          <p className="muted small">Advancing the clock moves token expiry and delivery retries (20 s apart) without waiting.</p>
          <div className="actions">
            {CLOCK_STEPS.map((s) => (
              <button type="button" key={s.minutes} onClick={() => clock.mutate(s.minutes)} disabled={clock.isPending}>+{s.label}</button>
            ))}
          </div>
          {clock.isError && <ErrorPanel error={clock.error} compact />}
        </section>
      </div>
      <section className="card">
        <h2>What happened</h2>
        <ol className="timeline" aria-label="Demo log">
          {log.map((o, i) => (
            <li key={i}><strong>{o.message}</strong> <span className="muted small">sandbox time {formatTime(o.sandboxNow)}</span></li>
          ))}
          {log.length === 0 && <li className="muted">Press a button: the notification it causes appears in Webhooks.</li>}
        </ol>
      </section>
    </div>
  );
}
