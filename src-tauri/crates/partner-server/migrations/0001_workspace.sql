-- The team workspace's first schema (partner-server; `partner server init` applies it).

-- One row: what the workspace was created with. The fingerprint of the server key the
-- signing keys are sealed with lets a server started with another key be refused by name
-- instead of failing to open every key.
CREATE TABLE workspace (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    created_at timestamptz NOT NULL DEFAULT now(),
    server_key_fingerprint text NOT NULL
);

-- The team's members. A token is shown once and kept as its SHA-256 only.
CREATE TABLE members (
    id bigserial PRIMARY KEY,
    name text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 100),
    role text NOT NULL CHECK (role IN ('viewer', 'support', 'developer', 'admin')),
    token_sha256 bytea NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by text
);

-- Every write, under the member who made it; refusals too.
CREATE TABLE audit (
    id bigserial PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT now(),
    member text NOT NULL,
    role text NOT NULL,
    action text NOT NULL,
    target text NOT NULL DEFAULT '',
    outcome text NOT NULL,
    detail text NOT NULL DEFAULT ''
);
CREATE INDEX audit_at ON audit (at DESC, id DESC);

-- The subscriptions' signing keys, sealed with the server key (AES-256-GCM-SIV, partner-seal),
-- the subscription id authenticated with each.
CREATE TABLE signing_keys (
    subscription_id text PRIMARY KEY,
    sealed_current bytea NOT NULL,
    sealed_previous bytea,
    replaced_at timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Every request that arrived on a server's webhook path (and junk elsewhere), as the local
-- listener keeps it. `record` is the listener's capture: its JSON as UTF-8 bytes, the body in it as
-- Base64 (bytes, not jsonb: jsonb refuses a NUL a junk request's header may carry);
-- the columns beside it are what filters and pages use.
CREATE TABLE captures (
    id bigserial PRIMARY KEY,
    received_at timestamptz NOT NULL,
    verdict text NOT NULL,
    subscription_id text,
    event_type text,
    resource_type text,
    event_id text,
    attempt integer NOT NULL,
    notification_id bigint,
    status smallint NOT NULL,
    record bytea NOT NULL,
    -- Words of the body and of the header values ('simple': ids and JSON keys as written).
    search tsvector NOT NULL
);
CREATE INDEX captures_search ON captures USING gin (search);
CREATE INDEX captures_verdict ON captures (verdict, id DESC);
CREATE INDEX captures_event_type ON captures (event_type, id DESC);
CREATE INDEX captures_resource_type ON captures (resource_type, id DESC);
CREATE INDEX captures_subscription ON captures (subscription_id, id DESC);
CREATE INDEX captures_event_id ON captures (event_id);
CREATE INDEX captures_notification ON captures (notification_id);
CREATE INDEX captures_received_at ON captures (received_at DESC, id DESC);

-- One row per notification (subscription, resource type, eventId): which attempt came last,
-- counted atomically however many servers take the attempts.
CREATE TABLE notifications (
    subscription_id text NOT NULL,
    resource_type text NOT NULL,
    event_id text NOT NULL,
    attempts integer NOT NULL,
    first_capture_id bigint NOT NULL,
    PRIMARY KEY (subscription_id, resource_type, event_id)
);

-- A member's note on a transaction or a capture, seen by every member.
CREATE TABLE notes (
    id bigserial PRIMARY KEY,
    target_kind text NOT NULL CHECK (target_kind IN ('capture', 'transaction')),
    target_id text NOT NULL,
    author text NOT NULL,
    at timestamptz NOT NULL DEFAULT now(),
    text text NOT NULL CHECK (length(text) BETWEEN 1 AND 10000)
);
CREATE INDEX notes_target ON notes (target_kind, target_id, id);
