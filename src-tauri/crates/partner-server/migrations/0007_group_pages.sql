-- A page grouped by notification keeps a capture when no newer capture of its notification
-- matches (`capture_pages`): one probe of (notification_id, id) per capture, answered by the
-- index alone once it holds the id; and the walk over one subscription's captures reads each
-- capture's notification from that index's entries rather than the heap. Both replace the
-- index they extend, so a capture still writes as many index entries (BENCHMARKS.md, the team
-- workspace: 20,000-row inserts within the run-to-run spread before and after).
DROP INDEX captures_notification;
CREATE INDEX captures_notification ON captures (notification_id, id);
DROP INDEX captures_subscription;
CREATE INDEX captures_subscription ON captures (subscription_id, id DESC) INCLUDE (notification_id);
