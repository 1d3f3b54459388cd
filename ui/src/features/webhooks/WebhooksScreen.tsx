import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { api, type ListenerView, type RepointOffer } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { Inspector } from "./Inspector";
import { TunnelCheckResult } from "./TunnelCheckResult";
import { ListenerSettings } from "./ListenerSettings";
import { ListenerChecks } from "./ListenerChecks";
import { MissedNotifications } from "./MissedNotifications";
import { DesktopNotices } from "./DesktopNotices";
import { SandboxDeliveries } from "./SandboxDeliveries";
import { TestModeSettings } from "./TestModeSettings";
import { RepointOfferPanel } from "./RepointOfferPanel";
import { ForwardRules } from "./ForwardRules";
import { NO_FILTER, blockQuery, storeFilter } from "./inspectorModel";
import { teamIdentity, useTeam } from "../../lib/team";
import { describeJunk, junkCounter } from "./listenerModel";

/**
 * Reads what the screen's first open reads (the inspector's first block and its counts, with
 * no filter), answers dropped: the store's pages and the read path are warm for the real open.
 * Then the store readies its other read connections for the first searches. Failures are left
 * for the screen to show.
 */
export function warmWebhooks(): void {
  const filter = storeFilter(NO_FILTER);
  void Promise.allSettled([api.inspectorPage(blockQuery(filter, false, 0)), api.inspectorFacets(filter)]).then(() =>
    api.inspectorWarmUp().catch(() => {}),
  );
}

export function WebhooksScreen({ selectedCapture = null, sandbox = false }: { selectedCapture?: number | null; sandbox?: boolean }) {
  // Asked again every 10 s while it runs, so its junk counter (what a scan of the tunnel URL
  // cost) stays current; the call reads only memory.
  const listener = useQuery({ queryKey: ["listener"], queryFn: api.listenerStatus, retry: false, refetchInterval: (q) => (q.state.data?.running ? 10_000 : false) });
  const strip = useOneOpen();
  const team = useTeam().data;
  return (
    <div className="page fill">
      <div className="toolbar">
        <h1>Webhooks</h1>
        {listener.data && <ListenerControls view={listener.data} />}
      </div>
      {listener.isError && <ErrorPanel error={listener.error} onRetry={() => void listener.refetch()} />}
      {listener.data && (
        <div className="tool-strip" ref={strip} aria-label="Listener tools">
          <ListenerSettings view={listener.data} />
          <ForwardRules view={listener.data} />
          <TestModeSettings view={listener.data} />
          <ListenerChecks />
          <MissedNotifications />
          <DesktopNotices />
          {sandbox && <SandboxDeliveries />}
        </div>
      )}
      {team?.joined && (
        <p className="muted small" data-testid="inspector-source">
          The inspector shows the team workspace's captures ({team.url}), live; the listener above still takes this machine's own.
        </p>
      )}
      {/* A join or a leave changes whose captures these are: the inspector reads from the top. */}
      <Inspector key={teamIdentity(team)} selectedCapture={selectedCapture} />
    </div>
  );
}

/**
 * The tools sit folded in one strip above the inspector, and one opens at a time (below the
 * strip, at most part of the window), so the inspector keeps its room at 960x600.
 */
function useOneOpen() {
  const strip = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = strip.current;
    if (!element) return;
    // `toggle` does not bubble: caught on its way down instead.
    const onToggle = (e: Event) => {
      const opened = e.target;
      if (!(opened instanceof HTMLDetailsElement) || !opened.open || opened.parentElement !== element) return;
      for (const other of element.querySelectorAll<HTMLDetailsElement>(":scope > details[open]")) {
        if (other !== opened) other.open = false;
      }
    };
    element.addEventListener("toggle", onToggle, true);
    return () => element.removeEventListener("toggle", onToggle, true);
  });
  return strip;
}

export function ListenerControls({ view }: { view: ListenerView }) {
  const client = useQueryClient();
  const set = (v: ListenerView) => {
    // The top bar's listener URL (or problem) comes with the status: the commands' declarations
    // have it read again.
    client.setQueryData(["listener"], v);
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
      {view.junk && junkCounter(view.junk) && (
        <span className="muted small" data-testid="listener-junk" title={describeJunk(view.junk) ?? undefined}>
          {junkCounter(view.junk)}
        </span>
      )}
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
