/**
 * What the service did, for a sandbox connection: each notification it sent, to which
 * subscription and URL, every attempt (time, status or error, duration) and whether it was
 * delivered, is still pending or was discarded, beside the captures the listener kept of it.
 * A notification the listener never saw shows here with none.
 */
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, type DeliveryView } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { formatTime } from "../../lib/format";
import { Id } from "../../components/Id";
import { navigate } from "../../lib/router";

const STATE_PILL: Record<string, string> = { delivered: "valid", pending: "processing", discarded: "failed" };

export function SandboxDeliveries() {
  const [open, setOpen] = useState(false);
  const deliveries = useQuery({ queryKey: ["sandbox-deliveries"], queryFn: api.sandboxDeliveries, enabled: open, retry: false });
  const list = deliveries.data ?? [];
  const never = list.filter((d) => d.captureIds.length === 0).length;
  return (
    <details className="card settings-card" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary data-testid="deliveries">
        <span className="summary-title">Service deliveries</span>
        <span className="muted small">· the sandbox&apos;s delivery records, beside what the listener kept</span>
        {deliveries.data && <span className="muted small" data-testid="deliveries-count">· {list.length} notifications{never ? `, ${never} never seen by the listener` : ""}</span>}
      </summary>
      <div className="settings-body checks-body">
        <div className="actions">
          <button type="button" onClick={() => void deliveries.refetch()} disabled={deliveries.isFetching}>{deliveries.isFetching ? "Reading…" : "Refresh"}</button>
        </div>
        {deliveries.isError && <ErrorPanel error={deliveries.error} compact />}
        {deliveries.isSuccess && list.length === 0 && <p className="muted small">The sandbox has sent no notification yet.</p>}
        {list.length > 0 && (
          <table className="grid compact" aria-label="Deliveries">
            <thead>
              <tr><th>Queued</th><th>State</th><th>Event</th><th>Resource</th><th>Attempts</th><th>Captures</th></tr>
            </thead>
            <tbody>
              {list.map((d) => <DeliveryRow key={`${d.subscriptionId}/${d.resourceType}/${d.eventId}`} delivery={d} />)}
            </tbody>
          </table>
        )}
      </div>
    </details>
  );
}

function DeliveryRow({ delivery: d }: { delivery: DeliveryView }) {
  const attempts = d.attempts.map((a) => (a.status !== null ? `${a.status}` : (a.error ?? "no answer"))).join(" · ");
  return (
    <tr data-delivery-event-id={d.eventId} data-state={d.state} data-captures={d.captureIds.length}>
      <td className="mono">{formatTime(d.enqueuedAt)}</td>
      <td><span className={`pill ${STATE_PILL[d.state] ?? "muted-pill"}`}>{d.state}</span></td>
      <td>{d.eventType}</td>
      <td className="mono" title={`${d.url} · subscription ${d.subscriptionId}`}>{d.resourceType.replace("urn:svc:partner:", "")} <Id value={d.resourceId} compact /></td>
      <td className="mono small" title={d.attempts.map((a) => `#${a.number} ${formatTime(a.startedAt)} ${a.durationMs} ms`).join("\n")}>
        <span className="cell-clip wide">{d.attempts.length ? `${d.attempts.length}: ${attempts}` : (d.notSentBecause ?? "none yet")}</span>
      </td>
      <td>
        {d.captureIds.length === 0 ? (
          <span className="muted small">never seen</span>
        ) : (
          <span className="row-actions">
            {d.captureIds.map((id) => (
              <button key={id} type="button" className="link" data-testid={`delivery-capture-${id}`} onClick={() => navigate("webhooks", String(id))}>#{id}</button>
            ))}
          </span>
        )}
      </td>
    </tr>
  );
}
