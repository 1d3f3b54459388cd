/** The listener and the tunnel check in the top bar, each a link to the Webhooks screen; the team workspace joined, a link to Connections. */
import type { AppStatus, TunnelStatus } from "../platform";
import { routeHref } from "../lib/router";
import { useTeam } from "../lib/team";
import { teamBadge } from "../features/connections/workspaceModel";
import { tunnelBadge } from "./shellModel";

export function ListenerBadge({ listener }: { listener: AppStatus["listener"] }) {
  if (listener.running && listener.url) {
    return (
      <a href={routeHref("webhooks")} className="topbar-link mono small shrink" data-testid="listener-url" title={`Webhook listener: ${listener.url}`}>
        {listener.url}
      </a>
    );
  }
  return (
    <a href={routeHref("webhooks")} className="topbar-link small listener-off" data-testid="listener-off" title={listener.problem?.message ?? "The webhook listener is stopped."}>
      Listener off
    </a>
  );
}

export function TunnelBadge({ tunnel }: { tunnel: TunnelStatus }) {
  const badge = tunnelBadge(tunnel);
  return (
    <a href={routeHref("webhooks")} className={`topbar-link small tunnel-status ${badge.tone}`} data-testid="tunnel-status" data-tone={badge.tone} title={badge.title} aria-live="polite">
      {badge.text}
    </a>
  );
}

/** "Team: NAME (role)" while a team workspace is joined, a link to its section in Connections. */
export function TeamBadge() {
  const team = useTeam();
  const text = teamBadge(team.data);
  if (!text || !team.data) return null;
  const reachable = team.data.reachable;
  return (
    <a
      href={routeHref("connections")}
      className={`topbar-link small team-badge${reachable ? "" : " unreachable"}`}
      data-testid="team-badge"
      title={reachable ? `Team workspace ${team.data.url ?? ""}` : `Team workspace ${team.data.url ?? ""} is not reachable: ${team.data.lastError ?? ""}`}
    >
      {text}
    </a>
  );
}
