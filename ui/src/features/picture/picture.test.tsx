import { fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { mockCommands, renderWithClient } from "../../test/render";
import type { NotificationPicture as Picture, NotificationStory } from "../../platform";
import { NotificationPicture } from "./NotificationPicture";
import { isSettled, pictureKey } from "./pictureModel";

function story(outcome: string): NotificationStory {
  return { subscriptionId: "sub-1", resourceType: "urn:svc:partner:transaction", eventType: "transaction.created", eventId: "evt-1", outcome, queuedAt: "2026-11-27T10:00:00Z", entries: [] };
}

function drawn(outcome: string): Picture {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" class="pcp" width="1000" height="300" data-outcome="${outcome}" data-lanes="lender service network listener"><g class="step" data-step="attempt" data-attempt="1" data-status="503"></g></svg>`;
  return { svg, width: 1000, height: 300, title: "transaction.created · event evt-1", story: story(outcome) };
}

describe("the notification picture", () => {
  it("names each picture's notification in its query key", () => {
    expect(pictureKey({ of: "capture", captureId: 7 })).toBe("capture:7");
    expect(pictureKey({ of: "notification", subscriptionId: "s", resourceType: "r", eventId: "e" })).toBe("notification:s/r/e");
    expect(pictureKey({ of: "newestOfTransaction", transactionId: "t" })).toBe("transaction:t");
  });

  it("is settled once the service can send no new attempt", () => {
    expect(isSettled(drawn("delivered"))).toBe(true);
    expect(isSettled(drawn("discarded"))).toBe(true);
    expect(isSettled(drawn("pending"))).toBe(false);
    expect(isSettled(drawn("refused"))).toBe(false);
    expect(isSettled(null)).toBe(false);
  });

  it("shows the shell's drawing and exports it as SVG and PNG through the save dialog", async () => {
    const calls = mockCommands({
      notification_picture: () => drawn("delivered"),
      export_notification_picture: (args) => ({ path: `/exports/notification-evt-1.${String(args.format)}`, count: 1, skipped: 0, cancelled: false }),
    });
    renderWithClient(<NotificationPicture of={{ of: "capture", captureId: 7 }} />);
    const frame = await screen.findByTestId("picture-svg");
    expect(frame).toHaveAttribute("data-outcome", "delivered");
    expect(frame.querySelector("svg [data-step=attempt]")).toHaveAttribute("data-status", "503");
    expect(calls.find((c) => c.cmd === "notification_picture")?.args.of).toEqual({ of: "capture", captureId: 7 });

    fireEvent.click(screen.getByTestId("picture-export-png"));
    await waitFor(() => expect(screen.getByTestId("job-result")).toHaveAttribute("title", "/exports/notification-evt-1.png"));
    const exported = calls.filter((c) => c.cmd === "export_notification_picture");
    expect(exported.map((c) => c.args.format)).toEqual(["png"]);
    expect(exported[0]?.args.of).toEqual({ of: "capture", captureId: 7 });

    // Enlarged over the window for a presenter; Escape returns, wherever the focus is.
    const panel = screen.getByTestId("notification-picture");
    fireEvent.click(screen.getByTestId("picture-enlarge"));
    expect(panel).toHaveClass("enlarged");
    expect(panel).toHaveAttribute("role", "dialog");
    fireEvent.keyDown(window, { key: "Escape" });
    await waitFor(() => expect(panel).not.toHaveClass("enlarged"));
  });

  it("says so when the console knows nothing of the notification yet, and waits for it when live", async () => {
    let answers = 0;
    mockCommands({
      notification_picture: () => {
        answers += 1;
        return answers < 2 ? null : drawn("pending");
      },
    });
    renderWithClient(<NotificationPicture of={{ of: "newestOfTransaction", transactionId: "t-1" }} live />);
    expect(await screen.findByTestId("picture-none")).toHaveTextContent(/Waiting for the service/);
    expect(screen.getByTestId("picture-export-svg")).toBeDisabled();
    // Read again on its own while nothing is settled.
    await waitFor(() => expect(screen.getByTestId("picture-svg")).toHaveAttribute("data-outcome", "pending"), { timeout: 4000 });
  });

  it("keeps the last picture while the same one is read afresh, never another notification's", async () => {
    const pending = new Promise<Picture>(() => {});
    mockCommands({
      notification_picture: (args) => ((args.of as { captureId?: number }).captureId === 7 ? drawn("delivered") : pending),
    });
    const view = renderWithClient(<NotificationPicture of={{ of: "capture", captureId: 7 }} />);
    await screen.findByTestId("picture-svg");
    // The same notification read afresh (the Demo's next step): the picture stays meanwhile.
    let answers = 0;
    mockCommands({ notification_picture: () => (answers++ === 0 ? pending : drawn("delivered")) });
    view.rerenderWithClient(<NotificationPicture of={{ of: "capture", captureId: 7 }} generation={1} />);
    expect(screen.getByTestId("picture-svg")).toBeInTheDocument();
    // Another capture: its picture is not the last one's.
    view.rerenderWithClient(<NotificationPicture of={{ of: "capture", captureId: 8 }} />);
    await waitFor(() => expect(screen.queryByTestId("picture-svg")).toBeNull());
    expect(screen.getByText("Drawing…")).toBeInTheDocument();
  });
});
