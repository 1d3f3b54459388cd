/**
 * What the update banner and the "About and updates" dialog say, from the shell's `UpdateView`
 * (pure: the components only lay it out).
 */
import type { UpdateView } from "../platform";

/** The one-line banner above every screen, or none. */
export function updateBanner(view: UpdateView | undefined, dismissed: string | null): { text: string; tone: "info" | "bad" } | null {
  if (!view) return null;
  const offer = view.offer;
  if (view.phase === "installing" && offer) return { text: `Installing Partner Console ${offer.version}… ${progressText(view)}`, tone: "info" };
  // An install that failed says so until dismissed (a failed check at start only in the dialog:
  // an offline start is not worth a banner).
  if (view.phase === "failed" && offer && view.problem && dismissed !== `failed:${offer.version}`) return { text: view.problem.message, tone: "bad" };
  if (view.phase === "available" && offer && dismissed !== offer.version) return { text: `Partner Console ${offer.version} is available (you have ${offer.current}).`, tone: "info" };
  return null;
}

/** "12.3 of 60.0 MB" while downloading, or what is happening after it. */
export function progressText(view: UpdateView): string {
  if (view.downloaded === null) return "";
  const mb = (bytes: number) => (bytes / 1_000_000).toFixed(1);
  if (view.total !== null && view.downloaded >= view.total) {
    return "Downloaded and verified; installing (the system may ask for an administrator's password)…";
  }
  return view.total !== null ? `Downloading ${mb(view.downloaded)} of ${mb(view.total)} MB` : `Downloading ${mb(view.downloaded)} MB`;
}

/** The status line of the dialog. */
export function statusLine(view: UpdateView): string {
  switch (view.phase) {
    case "idle":
      return view.off === "managed" ? "Update checks are off on this machine." : "Not checked since Partner Console started.";
    case "checking":
      return "Asking the release page for a newer version…";
    case "upToDate":
      return `Partner Console ${view.current} is the newest version${view.checkedAt ? ` (checked ${shortTime(view.checkedAt)})` : ""}.`;
    case "available":
      return view.offer ? `Partner Console ${view.offer.version} is available.` : "A newer version is available.";
    case "installing":
      return progressText(view) || "Installing…";
    case "failed":
      return view.problem?.message ?? "The update did not go through.";
  }
}

function shortTime(at: string): string {
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? at : date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

/** The installation as users know it. */
export function installedFrom(view: UpdateView): string {
  switch (view.installer) {
    case "deb":
      return "installed from a .deb";
    case "rpm":
      return "installed from an .rpm";
    case "appimage":
      return "an AppImage";
    case "msi":
    case "nsis":
      return "installed with the Windows installer";
    case "app":
      return "the macOS app";
    default:
      return view.off === "notInstalled" ? "built from source" : "";
  }
}

/** A window event: "About and updates" asked for from a menu. */
export const OPEN_UPDATES_EVENT = "partner-open-updates";

export function openUpdates(): void {
  window.dispatchEvent(new Event(OPEN_UPDATES_EVENT));
}
