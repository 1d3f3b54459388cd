import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
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

  it("takes Ctrl+Shift+M (or Cmd+Shift+M) as the stage shortcut, nothing near it", () => {
    const key = { ctrlKey: true, metaKey: false, altKey: false, shiftKey: true, key: "M" };
    expect(isStageShortcut(key)).toBe(true);
    expect(isStageShortcut({ ...key, ctrlKey: false, metaKey: true, key: "m" })).toBe(true);
    expect(isStageShortcut({ ...key, shiftKey: false })).toBe(false);
    expect(isStageShortcut({ ...key, altKey: true })).toBe(false);
    expect(isStageShortcut({ ...key, key: "K" })).toBe(false);
  });
});

describe("the stylesheet's themes", () => {
  const css = readFileSync(join(__dirname, "..", "styles.css"), "utf8");
  const block = (start: number) => css.slice(css.indexOf("{", start) + 1, css.indexOf("}", start)).replace(/\s+/g, " ").trim();

  it("has the same dark set when chosen and for System on a dark desktop, and so for high contrast", () => {
    const chosenDark = block(css.indexOf(':root[data-theme="dark"]'));
    const systemDark = block(css.indexOf(":root:not([data-theme])", css.indexOf("@media (prefers-color-scheme: dark)")));
    expect(chosenDark).toContain("color-scheme: dark");
    expect(systemDark).toBe(chosenDark);
    const chosenContrast = block(css.indexOf(':root[data-theme="contrast"]'));
    const systemContrast = block(css.indexOf(":root:not([data-theme])", css.indexOf("@media (prefers-contrast: more)")));
    expect(chosenContrast).toContain("--ink: #000000");
    expect(systemContrast).toBe(chosenContrast);
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
