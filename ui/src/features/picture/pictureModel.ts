import type { NotificationPicture, PictureOf } from "../../platform";

/** The query key of a picture: which notification it is of. */
export function pictureKey(of: PictureOf): string {
  switch (of.of) {
    case "capture":
      return `capture:${of.captureId}`;
    case "notification":
      return `notification:${of.subscriptionId}/${of.resourceType}/${of.eventId}`;
    case "newestOfTransaction":
      return `transaction:${of.transactionId}`;
  }
}

/** What the service ends a notification with: no new attempt will come. */
const SETTLED = new Set(["delivered", "discarded", "acknowledged"]);

/** Whether the picture will not change on its own any more (a live picture stops reading it). */
export function isSettled(picture: NotificationPicture | null | undefined): boolean {
  return !!picture && SETTLED.has(picture.story.outcome);
}
