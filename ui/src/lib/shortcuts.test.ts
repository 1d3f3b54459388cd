import { describe, expect, it } from "vitest";
import { detectPlatform, isLetter, isPaletteShortcut, isStageShortcut, screenShortcut, shortcutLabels } from "./shortcuts";

const none = { ctrlKey: false, metaKey: false, altKey: false, shiftKey: false };

describe("the platform", () => {
  it("is a Mac by the webview's navigator, anything else is not", () => {
    expect(detectPlatform({ platform: "MacIntel", userAgent: "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15" })).toBe("mac");
    expect(detectPlatform({ userAgentData: { platform: "macOS" } })).toBe("mac");
    expect(detectPlatform({ platform: "Win32", userAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Edg/126.0" })).toBe("other");
    expect(detectPlatform({ platform: "Linux x86_64", userAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15" })).toBe("other");
    expect(detectPlatform(undefined)).toBe("other");
  });
});

describe("the screen shortcuts", () => {
  it("go by the digit key's code, so a Mac's Option+1 (\"¡\") is screen 1", () => {
    expect(screenShortcut({ ...none, altKey: true, code: "Digit1" })).toBe(1);
    // What macOS reports for Option+1 and Option+9: the typed character is not a digit.
    expect(screenShortcut({ ...none, altKey: true, code: "Digit1", ...{ key: "¡" } })).toBe(1);
    expect(screenShortcut({ ...none, altKey: true, code: "Digit9", ...{ key: "ª" } })).toBe(9);
    // AZERTY's top row types "&" for the 1 key without Shift: still screen 1.
    expect(screenShortcut({ ...none, altKey: true, code: "Digit1", ...{ key: "&" } })).toBe(1);
  });

  it("take nothing else", () => {
    expect(screenShortcut({ ...none, code: "Digit1" })).toBeNull();
    expect(screenShortcut({ ...none, altKey: true, code: "Digit0" })).toBeNull();
    expect(screenShortcut({ ...none, altKey: true, code: "Numpad1" })).toBeNull();
    expect(screenShortcut({ ...none, altKey: true, code: "KeyA" })).toBeNull();
    // AltGr on Windows is Ctrl+Alt: a character, not a shortcut.
    expect(screenShortcut({ ...none, altKey: true, ctrlKey: true, code: "Digit2" })).toBeNull();
    expect(screenShortcut({ ...none, altKey: true, metaKey: true, code: "Digit2" })).toBeNull();
    expect(screenShortcut({ ...none, altKey: true, shiftKey: true, code: "Digit2" })).toBeNull();
  });
});

describe("the command palette's shortcut", () => {
  it("is ⌘K on a Mac and Ctrl+K on Linux and Windows, not the other's", () => {
    expect(isPaletteShortcut({ ...none, metaKey: true, key: "k", code: "KeyK" }, "mac")).toBe(true);
    expect(isPaletteShortcut({ ...none, ctrlKey: true, key: "k", code: "KeyK" }, "mac")).toBe(false);
    expect(isPaletteShortcut({ ...none, ctrlKey: true, key: "k", code: "KeyK" }, "other")).toBe(true);
    expect(isPaletteShortcut({ ...none, metaKey: true, key: "k", code: "KeyK" }, "other")).toBe(false);
    expect(isPaletteShortcut({ ...none, ctrlKey: true, shiftKey: true, key: "K", code: "KeyK" }, "other")).toBe(false);
    expect(isPaletteShortcut({ ...none, ctrlKey: true, altKey: true, key: "k", code: "KeyK" }, "other")).toBe(false);
  });

  it("follows the layout's letter, and the key's place where the layout has no Latin letters", () => {
    // Dvorak: the key QWERTY calls V types "k".
    expect(isLetter({ key: "k", code: "KeyV" }, "k")).toBe(true);
    expect(isLetter({ key: "k", code: "KeyV" }, "v")).toBe(false);
    // Russian: the K key types "л".
    expect(isLetter({ key: "л", code: "KeyK" }, "k")).toBe(true);
    expect(isStageShortcut({ ...none, ctrlKey: true, shiftKey: true, key: "Ь", code: "KeyM" }, "other")).toBe(true);
  });
});

describe("the shortcuts' labels", () => {
  it("are a Mac's symbols on a Mac and words elsewhere", () => {
    const mac = shortcutLabels("mac");
    expect([mac.screen("1"), mac.screens, mac.palette, mac.stage]).toEqual(["⌥1", "⌥1…9", "⌘K", "⇧⌘M"]);
    const other = shortcutLabels("other");
    expect([other.screen("1"), other.screens, other.palette, other.stage]).toEqual(["Alt+1", "Alt+1…9", "Ctrl+K", "Ctrl+Shift+M"]);
  });
});
