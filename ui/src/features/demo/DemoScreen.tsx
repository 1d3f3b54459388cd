import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type DemoOutcome, type PictureOf, type ScenarioPlayView } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { formatTime } from "../../lib/format";
import { navigate, screenKey } from "../../lib/router";
import { SHORTCUTS } from "../../lib/shortcuts";
import { NotificationPicture } from "../picture/NotificationPicture";
import { stageIdsIn } from "../../lib/presentation";
import { useStageMode } from "../../lib/useDisplay";
import { appendOutcome, CLOCK_STEPS, FAULT_ENDPOINTS, FAULT_KINDS, faultForm, type FaultKind } from "./demoModel";
import { ScenarioPlayer } from "./ScenarioPlayer";

/** Play the lender against the embedded sandbox, so every webhook flow can be shown live. */
export function DemoScreen({ embedded }: { embedded: boolean }) {
  const client = useQueryClient();
  const stage = useStageMode();
  const products = useQuery({ queryKey: ["listing", "products", 0, 50, "listingName"], queryFn: () => api.listProducts({ start: 0, limit: 50, sort: "listingName" }), enabled: embedded });
  const [productId, setProductId] = useState<string>("");
  const [transactionId, setTransactionId] = useState<string>("");
  const [eventText, setEventText] = useState("Appraisal documents uploaded");
  const [log, setLog] = useState<DemoOutcome[]>([]);
  // Each step the lender plays may cause a notification: the live picture reads it afresh.
  const [steps, setSteps] = useState(0);
  // The notification a scenario is about (its last lender step's); the lender's own buttons
  // go back to the transaction's newest.
  const [scenarioPicture, setScenarioPicture] = useState<PictureOf | null>(null);
  const done = (o: DemoOutcome) => {
    setScenarioPicture(null);
    setLog((l) => appendOutcome(l, o));
    setSteps((n) => n + 1);
    if (o.transactionId) setTransactionId(o.transactionId);
  };
  // A scenario's step is the lender's act too: the live picture draws the scenario's transaction.
  // (The lender's own buttons have the listing read again by their commands' declarations; a
  // step may also be a play resumed with no call, so this one stays by hand.)
  const scenarioStep = (play: ScenarioPlayView) => {
    setSteps((n) => n + 1);
    setScenarioPicture(play.picture);
    if (play.transactionId) setTransactionId(play.transactionId);
    void client.invalidateQueries({ queryKey: ["listing", "transactions"] });
  };
  const chosenProduct = productId || products.data?.items.find((p) => p.webhooks.length > 0)?.id || products.data?.items[0]?.id || "";
  const newTx = useMutation({ mutationFn: () => api.demoNewTransaction(chosenProduct), onSuccess: done });
  const update = useMutation({ mutationFn: () => api.demoUpdateTransaction(transactionId), onSuccess: done });
  const custom = useMutation({ mutationFn: () => api.demoCustomEvent(transactionId, eventText), onSuccess: done });
  const clock = useMutation({ mutationFn: (m: number) => api.demoAdvanceClock(m), onSuccess: done });
  // Read again every 2 s only while a fault is in force, to show how many calls it faulted.
  const faults = useQuery({ queryKey: ["demo-faults"], queryFn: api.demoFaults, enabled: embedded, staleTime: 0, refetchInterval: (q) => (q.state.data?.length ? 2000 : false) });
  const [faultEndpoint, setFaultEndpoint] = useState<string>("products");
  const [faultKind, setFaultKind] = useState<FaultKind>("429");
  const [faultCount, setFaultCount] = useState(3);
  const shownFaults = (list: Awaited<ReturnType<typeof api.demoFaults>>) => client.setQueryData(["demo-faults"], list);
  const addFault = useMutation({ mutationFn: () => api.demoAddFault(faultForm(faultEndpoint, faultKind, faultCount)), onSuccess: shownFaults });
  const clearFaults = useMutation({ mutationFn: api.demoClearFaults, onSuccess: shownFaults });
  const revoke = useMutation({ mutationFn: api.demoRevokeTokens, onSuccess: done });

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
      <ScenarioPlayer onStep={scenarioStep} />
      {/* Right under the scenario's captions, so a presenter shows both without scrolling. */}
      {transactionId && (
        <section className="card" aria-label="Live picture">
          <NotificationPicture of={scenarioPicture ?? { of: "newestOfTransaction", transactionId }} live generation={steps} heading={scenarioPicture ? "The life of the scenario's notification, as it happens" : "The life of the newest notification, as it happens"} />
        </section>
      )}
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
            <input aria-label="Demo transaction" value={transactionId} onChange={(e) => {
              setScenarioPicture(null);
              setTransactionId(e.target.value);
            }} placeholder="created above, or paste an id" className="mono" />
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
        <section className="card" aria-label="Faults on demand">
          <h2>Faults on demand</h2>
          <p className="muted small">The sandbox misbehaves for the next calls, as a real service sometimes does: watch the console wait and retry in Calls ({SHORTCUTS.screen(screenKey("calls"))}).</p>
          <div className="form-row">
            <label>Calls to
              <select aria-label="Fault endpoint" data-testid="fault-endpoint" value={faultEndpoint} onChange={(e) => setFaultEndpoint(e.target.value)}>
                {FAULT_ENDPOINTS.map((f) => <option key={f.key} value={f.key}>{f.label}</option>)}
              </select>
            </label>
            <label>Get
              <select aria-label="Fault kind" data-testid="fault-kind" value={faultKind} onChange={(e) => setFaultKind(e.target.value as FaultKind)}>
                {FAULT_KINDS.map((f) => <option key={f.key} value={f.key}>{f.label}</option>)}
              </select>
            </label>
            <label>For the next
              <input type="number" aria-label="Fault count" data-testid="fault-count" min={1} max={100} value={faultCount} onChange={(e) => setFaultCount(Math.max(1, Math.min(100, Number(e.target.value) || 1)))} />
            </label>
          </div>
          <div className="actions">
            <button type="button" data-testid="fault-add" onClick={() => addFault.mutate()} disabled={addFault.isPending}>Add fault</button>
            <button type="button" data-testid="fault-clear" onClick={() => clearFaults.mutate()} disabled={clearFaults.isPending || (faults.data?.length ?? 0) === 0}>Clear faults</button>
            <button type="button" className="danger" data-testid="revoke-tokens" onClick={() => revoke.mutate()} disabled={revoke.isPending}>Revoke every token</button>
          </div>
          <ul className="fault-list" aria-label="Faults in force" data-testid="faults-in-force">
            {faults.data?.map((f) => <li key={f.id} className="mono small" data-testid="fault-row">{f.description}</li>)}
            {faults.data?.length === 0 && <li className="muted small">No fault in force: every call is answered as the spec says.</li>}
          </ul>
          {[faults, addFault, clearFaults, revoke].map((m, i) => (m.isError ? <ErrorPanel key={i} error={m.error} compact /> : null))}
        </section>
      </div>
      <section className="card">
        <h2>What happened</h2>
        <ol className="timeline" aria-label="Demo log">
          {log.map((o, i) => (
            <li key={i}><strong title={o.message}>{stage ? stageIdsIn(o.message) : o.message}</strong> <span className="muted small">sandbox time {formatTime(o.sandboxNow)}</span></li>
          ))}
          {log.length === 0 && <li className="muted">Press a button: the notification it causes appears in Webhooks.</li>}
        </ol>
      </section>
    </div>
  );
}
