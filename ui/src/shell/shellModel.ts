/**
 * What the frame around the screens (top bar and banners) says about the shell's state: the
 * keychain, the listener and the background tunnel check. Kept pure so the wording is tested
 * without rendering, and so the top bar and the banners cannot tell two different stories.
 */
import type { AppStatus, ListenerAddressForm, TunnelStatus } from "../platform";

/** What a locked or missing keychain means for the user's work, under the keychain's own words. */
export const KEYCHAIN_CONSEQUENCE =
  "Signing keys cannot be read: notifications for subscriptions whose keys are not loaded are recorded as unknown-subscription; captures are still kept.";

export type TunnelTone = "checking" | "ok" | "failing";

export interface TunnelBadge {
  text: string;
  tone: TunnelTone;
  /** The check's own sentence (and what to do), for the tooltip. */
  title: string;
}

/** The top bar's one-line summary of the background tunnel check. */
export function tunnelBadge(tunnel: TunnelStatus): TunnelBadge {
  const check = tunnel.check;
  if (tunnel.phase === "running") {
    return { text: "Tunnel: checking…", tone: "checking", title: `Checking ${tunnel.url}` };
  }
  if (tunnel.phase === "done" && check?.ok) {
    const text = check.roundTripMs !== null ? `Tunnel OK (${check.roundTripMs} ms)` : "Tunnel OK";
    return { text, tone: "ok", title: check.message };
  }
  const title = check
    ? [check.message, check.hint].filter((part): part is string => Boolean(part)).join(" ")
    : `The check of ${tunnel.url} did not finish. Run it again from Webhooks.`;
  return { text: "Tunnel failing", tone: "failing", title };
}

/**
 * The move to offer in the listener banner: "Use <address>" moves the listener to the free
 * address the shell found and keeps its path (`currentPath`, from the listener's view). None
 * when the shell offered no address, or the path is not known yet.
 */
export function suggestedMove(listener: AppStatus["listener"], currentPath: string | null): ListenerAddressForm | null {
  const { suggestedAddress, url } = listener;
  const path = currentPath ?? pathOf(url);
  if (!suggestedAddress || path === null) return null;
  return { address: suggestedAddress, path };
}

/** The path of a URL, or none when it is not one. */
function pathOf(url: string | null): string | null {
  if (!url) return null;
  try {
    return new URL(url).pathname;
  } catch {
    return null;
  }
}
