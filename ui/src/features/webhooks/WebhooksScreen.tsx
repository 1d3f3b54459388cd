import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type ListenerView, type RepointOffer } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { STATUS_KEY } from "../../startup";
import { Inspector } from "./Inspector";
import { TunnelCheckResult } from "./TunnelCheckResult";
import { ListenerSettings } from "./ListenerSettings";
import { ListenerChecks } from "./ListenerChecks";
import { MissedNotifications } from "./MissedNotifications";
import { SandboxDeliveries } from "./SandboxDeliveries";
import { TestModeSettings } from "./TestModeSettings";
import { RepointOfferPanel } from "./RepointOfferPanel";

export function WebhooksScreen({ selectedCapture = null, sandbox = false }: { selectedCapture?: number | null; sandbox?: boolean }) {
  const listener = useQuery({ queryKey: ["listener"], queryFn: api.listenerStatus, retry: false });
  return (
    <div className="page fill">
      <div className="toolbar">
        <h1>Webhooks</h1>
        {listener.data && <ListenerControls view={listener.data} />}
      </div>
      {listener.isError && <ErrorPanel error={listener.error} onRetry={() => void listener.refetch()} />}
      {listener.data && <ListenerSettings view={listener.data} />}
      {listener.data && <TestModeSettings view={listener.data} />}
      {listener.data && <ListenerChecks />}
      {listener.data && <MissedNotifications />}
      {listener.data && sandbox && <SandboxDeliveries />}
      <Inspector selectedCapture={selectedCapture} />
    </div>
  );
}

export function ListenerControls({ view }: { view: ListenerView }) {
  const client = useQueryClient();
  const set = (v: ListenerView) => {
    client.setQueryData(["listener"], v);
    // The top bar's listener URL (or problem) comes with the status.
    void client.invalidateQueries({ queryKey: STATUS_KEY });
  };
  const toggle = useMutation({ mutationFn: () => (view.running ? api.listenerStop() : api.listenerStart()), onSuccess: set });
  const [tunnel, setTunnel] = useState(view.tunnelUrl ?? "");
  const [offer, setOffer] = useState<RepointOffer | null>(null);
  const saveTunnel = useMutation({
    mutationFn: () => api.setTunnelUrl(tunnel.trim() || null),
    onMutate: () => setOffer(null),
    onSuccess: (saved) => {
      set(saved.listener);
      setOffer(saved.repoint);
    },
  });
  const check = useMutation({ mutationFn: api.checkTunnel });

  return (
    <div className="listener-controls">
      <label className="switch">
        <input type="checkbox" role="switch" aria-label="Listener on" checked={view.running} onChange={() => toggle.mutate()} disabled={toggle.isPending} />
        <span>{view.running ? "Listening" : "Stopped"}</span>
      </label>
      <span className="mono small" data-testid="listener-address">{view.running ? `${view.address}:${view.port}` : "—"}</span>
      <form className="inline-form" onSubmit={(e) => { e.preventDefault(); saveTunnel.mutate(); }}>
        <input aria-label="Tunnel URL" placeholder="Tunnel URL (https://…)" value={tunnel} onChange={(e) => setTunnel(e.target.value)} size={26} />
        <button type="submit">Save</button>
        <button type="button" onClick={() => check.mutate()} disabled={check.isPending}>{check.isPending ? "Checking…" : "Check tunnel"}</button>
      </form>
      {check.data && <TunnelCheckResult check={check.data} />}
      {offer && <RepointOfferPanel key={`${offer.from} ${offer.to}`} offer={offer} onClose={() => setOffer(null)} />}
      {[toggle, saveTunnel, check].map((m, i) => (m.isError ? <ErrorPanel key={i} error={m.error} compact /> : null))}
    </div>
  );
}
