/**
 * Checks the console's own listener as a receiver, the way the service meets it: each
 * subscription that reaches it (through the tunnel URL first, which also tests the tunnel's
 * TLS, or at the listener's own address) can be checked against the spec's webhook rules.
 * Folded by default, like the listener settings, so the inspector keeps the room.
 */
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { ReceiverCheck } from "../../components/ReceiverCheck";

export function ListenerChecks() {
  const [open, setOpen] = useState(false);
  const [checking, setChecking] = useState<string | null>(null);
  const subscriptions = useQuery({ queryKey: ["listener-subscriptions"], queryFn: api.listenerSubscriptions, enabled: open, retry: false });
  const list = subscriptions.data ?? [];
  const chosen = list.find((s) => s.subscription.subscriptionId === checking);
  return (
    <details className="card settings-card" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary data-testid="listener-checks">
        <span className="summary-title">Receiver check</span>
        <span className="muted small">· the spec&apos;s signing and endpoint rules, as the service meets them</span>
      </summary>
      <div className="settings-body checks-body">
        {subscriptions.isPending && open && <p className="muted small">Looking for subscriptions that reach the listener…</p>}
        {subscriptions.isError && <ErrorPanel error={subscriptions.error} compact onRetry={() => void subscriptions.refetch()} />}
        {subscriptions.isSuccess && list.length === 0 && (
          <p className="muted small">No subscription of this connection reaches the listener: add one pointing at its URL or the tunnel&apos;s.</p>
        )}
        {list.length > 0 && (
          <table className="grid compact" aria-label="Subscriptions reaching the listener">
            <tbody>
              {list.map((s) => (
                <tr key={s.subscription.subscriptionId} data-subscription-id={s.subscription.subscriptionId}>
                  <td>{s.productName}</td>
                  <td className="mono"><span className="cell-clip wide" title={s.subscription.url}>{s.subscription.url}</span></td>
                  <td><span className={`pill ${s.via === "tunnel" ? "processing" : "muted-pill"}`}>{s.via === "tunnel" ? "tunnel" : "direct"}</span></td>
                  <td>
                    <button type="button" data-testid={`listener-check-${s.subscription.subscriptionId}`} onClick={() => setChecking(s.subscription.subscriptionId)}>Check</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {chosen && (
          <ReceiverCheck key={chosen.subscription.subscriptionId} productId={chosen.productId} subscription={chosen.subscription} onClose={() => setChecking(null)} />
        )}
      </div>
    </details>
  );
}
