import { emit } from "@tauri-apps/api/event";
import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { UpdateOffer, UpdateView } from "../platform";
import { mockCommands, renderWithClient } from "../test/render";
import { Updates } from "./Updates";
import { openUpdates, progressText, statusLine, updateBanner } from "./updateModel";

const offer: UpdateOffer = {
  version: "0.2.0",
  current: "0.1.0",
  notes: "Faster inspector.\nSigned updates.",
  date: "2026-12-01T10:00:00Z",
  installer: "deb",
  adminNote: "Partner Console was installed from a .deb: the update is installed by the system (dpkg), which asks for an administrator's password.",
  restartNote: "Installing restarts Partner Console. Its webhook listener stops for a few seconds meanwhile.",
  installable: true,
};

const view = (patch: Partial<UpdateView> = {}): UpdateView => ({
  current: "0.1.0",
  installer: "deb",
  settings: { checkAtStart: true },
  off: null,
  offNote: null,
  phase: "idle",
  offer: null,
  problem: null,
  checkedAt: null,
  downloaded: null,
  total: null,
  ...patch,
});

const available = view({ phase: "available", offer, checkedAt: "2026-12-06T08:00:00Z" });

describe("update model", () => {
  it("puts an offer, an install under way and a failed install in the banner, and nothing else", () => {
    expect(updateBanner(available, null)).toEqual({ text: "Partner Console 0.2.0 is available (you have 0.1.0).", tone: "info" });
    expect(updateBanner(available, "0.2.0")).toBeNull();
    expect(updateBanner(view({ phase: "upToDate" }), null)).toBeNull();
    // A check that failed at start (offline) is not worth a banner; a failed install is.
    const offline = view({ phase: "failed", problem: { message: "Could not reach the update server", hint: "" } });
    expect(updateBanner(offline, null)).toBeNull();
    const refused = view({ phase: "failed", offer, problem: { message: "The update to 0.2.0 was refused: it is not signed with Partner Console's release key.", hint: "" } });
    expect(updateBanner(refused, null)?.tone).toBe("bad");
    expect(updateBanner(refused, "failed:0.2.0")).toBeNull();
    expect(updateBanner(view({ phase: "installing", offer, downloaded: 12_300_000, total: 60_000_000 }), "0.2.0")?.text).toBe(
      "Installing Partner Console 0.2.0… Downloading 12.3 of 60.0 MB",
    );
  });

  it("says where the download is and when the installing begins", () => {
    expect(progressText(view({ downloaded: 5_000_000, total: null }))).toBe("Downloading 5.0 MB");
    expect(progressText(view({ downloaded: 60_000_000, total: 60_000_000 }))).toContain("administrator's password");
    expect(statusLine(view({ off: "managed" }))).toBe("Update checks are off on this machine.");
    expect(statusLine(view({ phase: "upToDate" }))).toBe("Partner Console 0.1.0 is the newest version.");
  });
});

describe("the update prompt", () => {
  it("says what is new, that the app restarts and what a .deb needs, and installs only on the user's yes", async () => {
    const calls = mockCommands({ update_state: () => available, install_update: () => view({ phase: "installing", offer, downloaded: 0 }) });
    renderWithClient(<Updates />);
    const banner = await screen.findByTestId("update-banner");
    expect(banner).toHaveTextContent("Partner Console 0.2.0 is available (you have 0.1.0).");
    fireEvent.click(within(banner).getByRole("button", { name: "What's new…" }));

    const dialog = screen.getByRole("dialog", { name: /Partner Console 0.1.0/ });
    expect(dialog).toHaveTextContent("installed from a .deb");
    expect(within(dialog).getByTestId("update-offer")).toHaveTextContent("Faster inspector.");
    expect(within(dialog).getByTestId("update-restart-note")).toHaveTextContent("restarts Partner Console");
    expect(within(dialog).getByTestId("update-restart-note")).toHaveTextContent("listener stops");
    expect(within(dialog).getByTestId("update-admin-note")).toHaveTextContent("administrator's password");
    // Nothing installed yet: the user has only read.
    expect(calls.some((c) => c.cmd === "install_update")).toBe(false);
    const install = within(dialog).getByRole("button", { name: "Install 0.2.0 and restart" });
    expect(install).toHaveFocus();
    fireEvent.click(install);
    await waitFor(() => expect(calls.filter((c) => c.cmd === "install_update")).toHaveLength(1));
    await waitFor(() => expect(screen.getByTestId("update-status")).toHaveTextContent("Downloading 0.0 MB"));
    // While it installs the dialog cannot be closed, and nothing can be asked twice.
    expect(within(dialog).getByRole("button", { name: "Close" })).toBeDisabled();
    expect(within(dialog).queryByTestId("install-update")).toBeNull();
  });

  it("follows the shell's update events: an offer found later shows its banner", async () => {
    mockCommands({ update_state: () => view({ phase: "checking" }) });
    renderWithClient(<Updates />);
    await waitFor(() => expect(screen.queryByTestId("update-banner")).toBeNull());
    await act(async () => {
      await emit("update", available);
    });
    expect(await screen.findByTestId("update-banner")).toHaveTextContent("0.2.0 is available");
    fireEvent.click(screen.getByRole("button", { name: "Later" }));
    expect(screen.queryByTestId("update-banner")).toBeNull();
  });

  it("turns the check at start off, checks now, and says why a managed machine cannot", async () => {
    const calls = mockCommands({
      update_state: () => view({ phase: "upToDate", checkedAt: "2026-12-06T08:00:00Z" }),
      set_update_checks: (args) => view({ settings: { checkAtStart: args.atStart as boolean }, off: args.atStart ? null : "setting" }),
      check_for_update: () => available,
    });
    renderWithClient(<Updates />);
    await waitFor(() => expect(calls.some((c) => c.cmd === "update_state")).toBe(true));
    act(() => openUpdates());
    const dialog = await screen.findByRole("dialog");
    const box = within(dialog).getByRole("checkbox", { name: /Look for a newer version when Partner Console starts/ });
    expect(box).toBeChecked();
    fireEvent.click(box);
    await waitFor(() => expect(calls.find((c) => c.cmd === "set_update_checks")?.args).toEqual({ atStart: false }));
    await waitFor(() => expect(box).not.toBeChecked());
    fireEvent.click(within(dialog).getByRole("button", { name: "Check now" }));
    await waitFor(() => expect(within(dialog).getByTestId("update-offer")).toHaveTextContent("What's new in 0.2.0"));
    fireEvent.keyDown(dialog, { key: "Escape" });
    expect(screen.queryByRole("dialog")).toBeNull();
  });

  it("on a managed machine, neither the setting nor Check now can turn checks back on", async () => {
    const note = "Update checks are turned off on this machine (PARTNER_NO_UPDATE_CHECK is set): your administrator provides updates.";
    mockCommands({ update_state: () => view({ off: "managed", offNote: note }) });
    renderWithClient(<Updates />);
    act(() => openUpdates());
    const dialog = await screen.findByRole("dialog");
    await waitFor(() => expect(dialog).toHaveTextContent("PARTNER_NO_UPDATE_CHECK"));
    expect(within(dialog).getByRole("checkbox")).toBeDisabled();
    expect(within(dialog).getByRole("checkbox")).not.toBeChecked();
    expect(within(dialog).getByRole("button", { name: "Check now" })).toBeDisabled();
  });

  it("says why an install was refused, and offers to try again", async () => {
    const refused = view({
      phase: "failed",
      offer,
      problem: {
        message: "The update to 0.2.0 was refused: the downloaded package does not match its signature (it was altered or damaged on the way).",
        hint: "Nothing was installed: Partner Console 0.1.0 stays as it is. Try again.",
      },
    });
    mockCommands({ update_state: () => refused });
    renderWithClient(<Updates />);
    const banner = await screen.findByTestId("update-banner");
    expect(banner).toHaveAttribute("role", "alert");
    expect(banner).toHaveTextContent("does not match its signature");
    fireEvent.click(within(banner).getByRole("button", { name: "Details" }));
    const dialog = screen.getByRole("dialog");
    expect(dialog).toHaveTextContent("0.1.0 stays as it is");
    expect(within(dialog).getByRole("button", { name: "Try again" })).toBeEnabled();
  });
});
