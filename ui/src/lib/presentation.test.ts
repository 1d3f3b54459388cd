import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  applyDisplay,
  changeDisplay,
  currentDisplay,
  DEFAULT_DISPLAY,
  DISPLAY_STORAGE_KEY,
  isSecretName,
  isStageShortcut,
  loadDisplay,
  looksLikeId,
  parseDisplayChoice,
  stageId,
  stageIdsIn,
  subscribeDisplay,
  systemTheme,
  toggleStage,
} from "./presentation";

afterEach(() => {
  changeDisplay(DEFAULT_DISPLAY);
  localStorage.clear();
});

describe("the stored display choice", () => {
  it("reads a valid choice", () => {
    expect(parseDisplayChoice('{"theme":"dark","stage":true}')).toEqual({ theme: "dark", stage: true });
    expect(parseDisplayChoice('{"theme":"contrast","stage":false}')).toEqual({ theme: "contrast", stage: false });
  });

  it("gives the defaults when nothing is stored", () => {
    expect(parseDisplayChoice(null)).toEqual({ theme: "system", stage: false });
    expect(parseDisplayChoice(undefined)).toEqual(DEFAULT_DISPLAY);
    expect(parseDisplayChoice("")).toEqual(DEFAULT_DISPLAY);
  });

  it("ignores what is corrupt, field by field, and never throws", () => {
    expect(parseDisplayChoice("{not json")).toEqual(DEFAULT_DISPLAY);
    expect(parseDisplayChoice("null")).toEqual(DEFAULT_DISPLAY);
    expect(parseDisplayChoice("[1,2]")).toEqual(DEFAULT_DISPLAY);
    expect(parseDisplayChoice('"dark"')).toEqual(DEFAULT_DISPLAY);
    expect(parseDisplayChoice('{"theme":"neon","stage":true}')).toEqual({ theme: "system", stage: true });
    expect(parseDisplayChoice('{"theme":"light","stage":"yes"}')).toEqual({ theme: "light", stage: false });
  });

  it("loads what was stored onto <html>, and a corrupt value leaves the defaults", () => {
    localStorage.setItem(DISPLAY_STORAGE_KEY, JSON.stringify({ theme: "dark", stage: true }));
    expect(loadDisplay()).toEqual({ theme: "dark", stage: true });
    expect(document.documentElement).toHaveAttribute("data-theme", "dark");
    expect(document.documentElement).toHaveAttribute("data-stage", "on");
    localStorage.setItem(DISPLAY_STORAGE_KEY, "}{");
    expect(loadDisplay()).toEqual(DEFAULT_DISPLAY);
    expect(document.documentElement).not.toHaveAttribute("data-theme");
    expect(document.documentElement).not.toHaveAttribute("data-stage");
  });

  it("keeps a change for the next start and tells its subscribers once", () => {
    let told = 0;
    const stop = subscribeDisplay(() => (told += 1));
    changeDisplay({ theme: "contrast" });
    toggleStage();
    changeDisplay({ theme: "contrast" }); // no change: nobody told
    stop();
    expect(told).toBe(2);
    expect(currentDisplay()).toEqual({ theme: "contrast", stage: true });
    expect(JSON.parse(localStorage.getItem(DISPLAY_STORAGE_KEY) ?? "null")).toEqual({ theme: "contrast", stage: true });
  });
});

describe("the attributes on <html>", () => {
  it("names the theme (none for System) and stage mode", () => {
    const root = document.createElement("html");
    applyDisplay({ theme: "dark", stage: true }, root);
    expect(root.getAttribute("data-theme")).toBe("dark");
    expect(root.getAttribute("data-stage")).toBe("on");
    applyDisplay({ theme: "contrast", stage: false }, root);
    expect(root.getAttribute("data-theme")).toBe("contrast");
    expect(root.hasAttribute("data-stage")).toBe(false);
    applyDisplay({ theme: "system", stage: false }, root);
    expect(root.hasAttribute("data-theme")).toBe(false);
    // jsdom has no matchMedia: System is light there, and nothing throws.
    expect(root.getAttribute("data-system")).toBe("light");
    applyDisplay({ theme: "light", stage: false }, root);
    expect(root.getAttribute("data-theme")).toBe("light");
    expect(root.hasAttribute("data-system")).toBe(false);
  });
});

/** A desktop whose media queries a test sets and changes, as `window.matchMedia` answers them. */
function fakeDesktop(initial: { dark: boolean; contrast: boolean }) {
  const state = { ...initial };
  const lists = new Map<string, MediaQueryList & EventTarget>();
  const matches = (query: string) => (query === "(prefers-color-scheme: dark)" ? state.dark : query === "(prefers-contrast: more)" ? state.contrast : false);
  const matchMedia = (query: string): MediaQueryList => {
    let list = lists.get(query);
    if (!list) {
      const target = new EventTarget();
      list = Object.assign(target, {
        media: query,
        onchange: null,
        addListener: () => {},
        removeListener: () => {},
      }) as unknown as MediaQueryList & EventTarget;
      Object.defineProperty(list, "matches", { get: () => matches(query) });
      lists.set(query, list);
    }
    return list;
  };
  return {
    matchMedia,
    /** The desktop changes: each query whose answer changed tells its listeners. */
    set(change: Partial<typeof state>) {
      const before = new Map([...lists.keys()].map((query) => [query, matches(query)]));
      Object.assign(state, change);
      for (const [query, list] of lists) if (before.get(query) !== matches(query)) list.dispatchEvent(new Event("change"));
    },
  };
}

describe("the System theme", () => {
  const html = () => document.documentElement;
  let desktop: ReturnType<typeof fakeDesktop>;

  beforeEach(() => {
    desktop = fakeDesktop({ dark: false, contrast: false });
    Object.defineProperty(window, "matchMedia", { configurable: true, writable: true, value: desktop.matchMedia });
  });

  afterEach(() => {
    Reflect.deleteProperty(window, "matchMedia");
    // Back to System with no matchMedia: stops listening to this test's fake desktop.
    localStorage.clear();
    loadDisplay();
  });

  it("resolves to what the desktop asks for, high contrast before dark", () => {
    expect(systemTheme()).toBe("light");
    desktop.set({ dark: true });
    expect(systemTheme()).toBe("dark");
    desktop.set({ contrast: true });
    expect(systemTheme()).toBe("contrast");
  });

  it("puts the desktop's theme on <html> as data-system, and follows it as it changes", () => {
    desktop.set({ dark: true });
    expect(loadDisplay().theme).toBe("system");
    expect(html()).not.toHaveAttribute("data-theme");
    expect(html()).toHaveAttribute("data-system", "dark");
    desktop.set({ dark: false });
    expect(html()).toHaveAttribute("data-system", "light");
    desktop.set({ contrast: true });
    expect(html()).toHaveAttribute("data-system", "contrast");
    desktop.set({ contrast: false, dark: true });
    expect(html()).toHaveAttribute("data-system", "dark");
    expect(html()).not.toHaveAttribute("data-theme");
  });

  it("ignores the desktop while another theme is chosen, and follows it again on System", () => {
    loadDisplay();
    expect(html()).toHaveAttribute("data-system", "light");
    changeDisplay({ theme: "dark" });
    expect(html()).toHaveAttribute("data-theme", "dark");
    expect(html()).not.toHaveAttribute("data-system");
    desktop.set({ contrast: true });
    desktop.set({ contrast: false, dark: false });
    expect(html()).toHaveAttribute("data-theme", "dark");
    expect(html()).not.toHaveAttribute("data-system");
    // Stage mode on and off leaves the chosen theme alone too.
    toggleStage();
    desktop.set({ dark: true });
    expect(html()).toHaveAttribute("data-theme", "dark");
    expect(html()).not.toHaveAttribute("data-system");
    changeDisplay({ theme: "system" });
    expect(html()).not.toHaveAttribute("data-theme");
    expect(html()).toHaveAttribute("data-system", "dark");
    desktop.set({ dark: false });
    expect(html()).toHaveAttribute("data-system", "light");
  });

  it("starts from a stored choice other than System without listening", () => {
    localStorage.setItem(DISPLAY_STORAGE_KEY, JSON.stringify({ theme: "contrast", stage: false }));
    loadDisplay();
    desktop.set({ dark: true });
    expect(html()).toHaveAttribute("data-theme", "contrast");
    expect(html()).not.toHaveAttribute("data-system");
  });
});

describe("ids and secrets in stage mode", () => {
  it("shortens a long id to its first 8 characters and leaves short ones whole", () => {
    expect(stageId("0f8e2c4a-1b2c-4d5e-8f90-123456789abc")).toBe("0f8e2c4a…");
    expect(stageId("t-123")).toBe("t-123");
    expect(stageId("demo-partner")).toBe("demo-partner");
  });

  it("tells an opaque id from words", () => {
    expect(looksLikeId("0f8e2c4a-1b2c-4d5e-8f90-123456789abc")).toBe(true);
    expect(looksLikeId("01HZX3K9Q8W7V6T5S4R3P2N1M0")).toBe(true);
    expect(looksLikeId("partner:read partner:write")).toBe(false);
    expect(looksLikeId("Bearer")).toBe(false);
    expect(looksLikeId("an-ordinary-listing-name")).toBe(false);
  });

  it("knows credential headers and secret fields, but not the kind of a token", () => {
    for (const name of ["Authorization", "svc-signature", "Cookie", "access_token", "client_secret", "signingKey", "X-Api-Key"]) {
      expect(isSecretName(name), name).toBe(true);
    }
    for (const name of ["token_type", "content-type", "Svc-SubscriptionId", "client_id", "encompass_client_id", "exp"]) {
      expect(isSecretName(name), name).toBe(false);
    }
  });

  it("takes Ctrl+Shift+M (⇧⌘M on a Mac) as the stage shortcut, nothing near it", () => {
    const key = { ctrlKey: true, metaKey: false, altKey: false, shiftKey: true, key: "M", code: "KeyM" };
    expect(isStageShortcut(key, "other")).toBe(true);
    expect(isStageShortcut({ ...key, ctrlKey: false, metaKey: true, key: "m" }, "mac")).toBe(true);
    expect(isStageShortcut({ ...key, ctrlKey: false, metaKey: true, key: "m" }, "other")).toBe(false);
    expect(isStageShortcut({ ...key, shiftKey: false }, "other")).toBe(false);
    expect(isStageShortcut({ ...key, altKey: true }, "other")).toBe(false);
    expect(isStageShortcut({ ...key, key: "K", code: "KeyK" }, "other")).toBe(false);
  });
});

describe("the stylesheet's themes", () => {
  const css = readFileSync(join(__dirname, "..", "styles.css"), "utf8");
  const block = (start: number) => css.slice(css.indexOf("{", start) + 1, css.indexOf("}", start)).replace(/\s+/g, " ").trim();

  it("writes each theme's set once, for the chosen theme and System alike", () => {
    expect(css).toContain(':root[data-theme="dark"], :root[data-system="dark"] {');
    expect(block(css.indexOf(':root[data-theme="dark"]'))).toContain("color-scheme: dark");
    expect(css).toContain(':root[data-theme="contrast"], :root[data-system="contrast"] {');
    expect(block(css.indexOf(':root[data-theme="contrast"]'))).toContain("--ink: #000000");
    for (const theme of ["dark", "contrast"]) {
      expect(css.split(`[data-theme="${theme}"]`).length - 1, theme).toBe(1);
      expect(css.split(`[data-system="${theme}"]`).length - 1, theme).toBe(1);
    }
    // System is resolved in presentation.ts, not by media queries in the stylesheet.
    expect(css).not.toMatch(/@media\s*\(prefers-(color-scheme|contrast)|:not\(\[data-theme\]\)/);
  });

  it("hard-codes no colour in the rules: every one is a variable of the themes", () => {
    const rules = css.slice(css.indexOf("* { box-sizing"));
    expect(rules.match(/#[0-9a-fA-F]{3,8}\b|rgba?\(/g)).toBeNull();
  });

  it("gives each theme every variable the light theme has", () => {
    const names = (text: string) => new Set(Array.from(text.matchAll(/(--[\w-]+):/g), (m) => m[1]));
    const light = names(block(css.indexOf(":root {")));
    for (const theme of ["dark", "contrast"]) {
      const set = names(block(css.indexOf(`:root[data-theme="${theme}"]`)));
      const missing = [...light].filter((name) => !set.has(name) && !["--radius", "--type-scale", "--focus-width"].includes(name ?? ""));
      expect(missing, theme).toEqual([]);
    }
  });
});

describe("ids within a sentence", () => {
  it("are shortened as stage mode shows ids, the rest of the sentence kept", () => {
    expect(stageIdsIn("The lender created transaction 32b6def6-676f-4cc8-9289-8b7369b87c07 on product acme-flood.")).toBe(
      "The lender created transaction 32b6def6… on product acme-flood.",
    );
    expect(stageIdsIn("no id here")).toBe("no id here");
  });
});
