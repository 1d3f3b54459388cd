/// The schema of version 3 (before the search index), as `store.rs` had it.
const SCHEMA_V3: &str = "CREATE TABLE IF NOT EXISTS captures (
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
";
