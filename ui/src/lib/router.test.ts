import { describe, expect, it } from "vitest";
import { parseRoute, routeHref, screenKey, SCREENS } from "./router";
import { shortcutLabels } from "./shortcuts";

describe("router", () => {
  it("names each screen's shortcut digit from the one list, so help text follows a reordering", () => {
    expect(screenKey("calls")).toBe(SCREENS.find((s) => s.screen === "calls")?.key);
    expect(new Set(SCREENS.map((s) => screenKey(s.screen))).size).toBe(SCREENS.length);
    expect(shortcutLabels("mac").screen(screenKey("calls"))).toBe(`⌥${screenKey("calls")}`);
    expect(shortcutLabels("other").screen(screenKey("calls"))).toBe(`Alt+${screenKey("calls")}`);
  });

  it("reads back the routes it writes, an event within its transaction included", () => {
    expect(parseRoute(routeHref("transactions", "t 1", "e/2"))).toEqual({ screen: "transactions", id: "t 1", eventId: "e/2" });
    expect(parseRoute(routeHref("calls"))).toEqual({ screen: "calls", id: null, eventId: null });
    expect(parseRoute("#/nowhere/x").screen).toBe("products");
  });
});
