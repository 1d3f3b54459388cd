/**
 * After a tunnel URL replaced another: the subscriptions still posting to the old one, where
 * they would go, and the choice to move them. Nothing moves without the user's yes: a
 * subscription may point at the old URL on purpose (another machine's tunnel, say).
 */
import { useMutation } from "@tanstack/react-query";
import { api, type RepointOffer, type RepointResult } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { Id } from "../../components/Id";
import { describeRepoint } from "./listenerModel";

export function RepointOfferPanel({ offer, onClose }: { offer: RepointOffer; onClose: () => void }) {
  const repoint = useMutation({
    mutationFn: () => api.repointSubscriptions(offer.from, offer.to),
    // The products' subscription tables show the URLs: the command's declaration has them
    // read again.
  });
  if (repoint.data) return <RepointResultPanel result={repoint.data} onClose={onClose} />;
  const n = offer.subscriptions.length;
  return (
    <section className="repoint card" aria-label="Re-point subscriptions" data-testid="repoint-offer">
      <h3>Re-point {n} subscription{n === 1 ? "" : "s"}?</h3>
      <p className="small">
        {n === 1 ? "This subscription still posts" : "These subscriptions still post"} to the tunnel URL you replaced:{" "}
        <code>{offer.from}</code> → <code>{offer.to}</code>
      </p>
      <div className="repoint-list">
        <table className="grid compact" aria-label="Subscriptions to re-point">
          <thead><tr><th>Product</th><th>Subscription</th><th>Now</th><th>After</th></tr></thead>
          <tbody>
            {offer.subscriptions.map((s) => (
              <tr key={s.subscriptionId}>
                <td className="mono"><Id value={s.productId} compact /></td>
                <td className="mono"><Id value={s.subscriptionId} compact /></td>
                <td className="mono"><span className="cell-clip" title={s.url}>{s.url}</span></td>
                <td className="mono"><span className="cell-clip" title={s.newUrl}>{s.newUrl}</span></td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {repoint.isError && <ErrorPanel error={repoint.error} compact />}
      <div className="actions">
        <button type="button" className="primary" onClick={() => repoint.mutate()} disabled={repoint.isPending}>
          {repoint.isPending ? "Re-pointing…" : "Re-point them"}
        </button>
        <button type="button" onClick={onClose} disabled={repoint.isPending}>Leave them</button>
      </div>
    </section>
  );
}

function RepointResultPanel({ result, onClose }: { result: RepointResult; onClose: () => void }) {
  return (
    <section className="repoint card" aria-label="Re-pointed subscriptions" data-testid="repoint-result" role="status">
      <p className={result.failures.length === 0 ? "ok small" : "field-error small"}>{describeRepoint(result)}</p>
      {result.failures.length > 0 && (
        <ul className="small">
          {result.failures.map((f) => <li key={f}>{f}</li>)}
        </ul>
      )}
      <div className="actions"><button type="button" onClick={onClose}>Close</button></div>
    </section>
  );
}
