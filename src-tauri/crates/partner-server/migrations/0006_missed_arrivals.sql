-- The missed-notification check (partner-local's `find_missed`, run by the servers) asks two
-- things of the captures per subscription: its first capture (`min(received_at)`), and the
-- (resource type, eventId) of those received since a time. `captures_subscription` is ordered
-- by id, not by time, so both would read every capture of the subscription from the heap; by
-- (subscription, time) with the two columns carried, the first is one index entry and the
-- second an index-only range scan.
CREATE INDEX captures_subscription_received ON captures (subscription_id, received_at)
    INCLUDE (resource_type, event_id);
