/**
 * The app's keyboard shortcuts on each OS, in one place: what a key press means and how a
 * shortcut is written.
 *
 * Why by `KeyboardEvent.code` for the screens: `key` is the character the press types, and on
 * macOS Option+1 types "¡" (Option+2 "™", …), so Alt+1…9 compared by `key` did nothing there;
 * `code` names the physical key (Digit1…Digit9) on every OS and layout (AZERTY's top row too).
 * Letters (Ctrl+K, Ctrl+Shift+M) go by `key`, which follows the layout the user types with
 * (Dvorak's K is where QWERTY's V is), falling back to `code` when the layout has no Latin
 * letters (a Cyrillic K types "л").
 *
 * Why ⌘ on macOS and Ctrl elsewhere, strictly: a Mac's shortcuts take Command (Control+K there
 * deletes to the end of a line in a text field), while on Linux and Windows the Meta key belongs
 * to the desktop (the Windows key opens the Start menu).
 */

export type KeyPlatform = "mac" | "other";

interface NavigatorLike {
  platform?: string;
  userAgent?: string;
  userAgentData?: { platform?: string };
}

/** Whether `nav` is a Mac's (the webview's navigator; WebKit on macOS says "MacIntel"). */
export function detectPlatform(nav: NavigatorLike | undefined): KeyPlatform {
  const said = nav?.userAgentData?.platform || nav?.platform || nav?.userAgent || "";
  return /mac/i.test(said) ? "mac" : "other";
}

/** The platform this page runs on. */
export const PLATFORM: KeyPlatform = detectPlatform(typeof navigator === "undefined" ? undefined : navigator);

type Modifiers = Pick<KeyboardEvent, "ctrlKey" | "metaKey" | "altKey" | "shiftKey">;

/** The platform's command modifier alone of Ctrl and ⌘: ⌘ on a Mac, Ctrl elsewhere. */
export function hasCommandKey(e: Modifiers, platform: KeyPlatform = PLATFORM): boolean {
  return platform === "mac" ? e.metaKey && !e.ctrlKey : e.ctrlKey && !e.metaKey;
}

/** Whether the press is the letter `letter` (lowercase a–z) on the user's layout. */
export function isLetter(e: Pick<KeyboardEvent, "key" | "code">, letter: string): boolean {
  const key = e.key.toLowerCase();
  if (/^[a-z]$/.test(key)) return key === letter;
  return e.code === `Key${letter.toUpperCase()}`;
}

/**
 * The screen number (1–9) of an Alt+digit press (Option+digit on a Mac), by the digit key's
 * `code`; `null` for any other press. AltGr (Ctrl+Alt on Windows) and other modifiers are not it.
 */
export function screenShortcut(e: Modifiers & Pick<KeyboardEvent, "code">): number | null {
  if (!e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return null;
  const digit = /^Digit([1-9])$/.exec(e.code);
  return digit ? Number(digit[1]) : null;
}

/** Ctrl+K (⌘K on a Mac): the command palette. */
export function isPaletteShortcut(e: Modifiers & Pick<KeyboardEvent, "key" | "code">, platform: KeyPlatform = PLATFORM): boolean {
  return hasCommandKey(e, platform) && !e.altKey && !e.shiftKey && isLetter(e, "k");
}

/** Ctrl+Shift+M (⇧⌘M on a Mac): stage mode on or off. */
export function isStageShortcut(e: Modifiers & Pick<KeyboardEvent, "key" | "code">, platform: KeyPlatform = PLATFORM): boolean {
  return hasCommandKey(e, platform) && e.shiftKey && !e.altKey && isLetter(e, "m");
}

/** How the shortcuts are written on `platform`: a Mac's symbols, or Linux's and Windows' words. */
export function shortcutLabels(platform: KeyPlatform = PLATFORM) {
  const mac = platform === "mac";
  return {
    screen: (digit: string) => (mac ? `⌥${digit}` : `Alt+${digit}`),
    screens: mac ? "⌥1…9" : "Alt+1…9",
    palette: mac ? "⌘K" : "Ctrl+K",
    stage: mac ? "⇧⌘M" : "Ctrl+Shift+M",
  };
}

/** The labels of this page's platform. */
export const SHORTCUTS = shortcutLabels();
