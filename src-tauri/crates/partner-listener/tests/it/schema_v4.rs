/// The schema of version 4 (the column indexes, before `facet_counts`), as `store.rs` and
/// `search.rs` had it.
const SCHEMA_V4: &str = "CREATE TABLE IF NOT EXISTS captures (
    id INTEGER PRIMARY KEY,
    received_at TEXT NOT NULL,
    received_at_us INTEGER NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    headers TEXT NOT NULL,
    body BLOB,
    body_size INTEGER NOT NULL,
    peer TEXT,
    verdict TEXT NOT NULL,
    matched_key TEXT,
    subscription_id TEXT,
    event_id TEXT,
    event_time TEXT,
    event_type TEXT,
    instance_id TEXT,
    resource_id TEXT,
    resource_type TEXT,
    resource_ref TEXT,
    attempt INTEGER NOT NULL,
    notification_id INTEGER,
    response_status INTEGER NOT NULL,
    response_body TEXT NOT NULL,
    response_from_test_mode INTEGER NOT NULL,
    response_delay_ms INTEGER NOT NULL,
    processing_micros INTEGER NOT NULL,
    replay INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS captures_received ON captures (received_at_us);
CREATE INDEX IF NOT EXISTS captures_by_notification ON captures (notification_id);
CREATE INDEX IF NOT EXISTS captures_list ON captures (id, verdict, event_type, resource_type,
    subscription_id, notification_id, received_at_us);
DROP INDEX IF EXISTS captures_verdicts;
DROP INDEX IF EXISTS captures_by_verdict;
DROP INDEX IF EXISTS captures_by_event_type;
DROP INDEX IF EXISTS captures_by_resource_type;
DROP INDEX IF EXISTS captures_by_subscription;
CREATE INDEX IF NOT EXISTS captures_verdict ON captures (verdict);
CREATE INDEX IF NOT EXISTS captures_event_type ON captures (event_type);
CREATE INDEX IF NOT EXISTS captures_resource_type ON captures (resource_type);
CREATE INDEX IF NOT EXISTS captures_subscription ON captures (subscription_id);
CREATE TABLE IF NOT EXISTS notifications (
    id INTEGER PRIMARY KEY,
    key BLOB NOT NULL,
    attempts INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS outbound (
    id INTEGER PRIMARY KEY,
    capture_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    url TEXT NOT NULL,
    sent_at TEXT NOT NULL,
    request_headers TEXT NOT NULL,
    request_body BLOB,
    status INTEGER,
    response_headers TEXT NOT NULL,
    response_body TEXT,
    elapsed_ms INTEGER NOT NULL,
    error TEXT
);
CREATE INDEX IF NOT EXISTS outbound_capture ON outbound (capture_id);
CREATE TABLE IF NOT EXISTS listener_runs (
    id INTEGER PRIMARY KEY,
    started_at_us INTEGER NOT NULL,
    stopped_at_us INTEGER
);
CREATE TABLE IF NOT EXISTS highest_deleted (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    id INTEGER NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS search_text USING fts5(
    body, header_values, content='', contentless_delete=1,
    tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS search_ids USING fts5(
    event_id, resource_id, instance_id, subscription_id, resource_ref,
    content='', contentless_delete=1, tokenize='trigram'
);
CREATE TABLE IF NOT EXISTS search_state (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    indexed_through INTEGER NOT NULL
);
INSERT OR IGNORE INTO search_state (one, indexed_through) VALUES (1, 0);
";
