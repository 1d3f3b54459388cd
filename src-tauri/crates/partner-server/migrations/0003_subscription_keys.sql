-- Subscribing and rotating through the workspace (partner-server): the keys of subscriptions a
-- service shows without an id, and a new key kept before the service holds it.

-- The signing keys of subscriptions a service shows without a `subscriptionId` (the spec shows
-- none): named by their product, `url` and `resource` until the first notification that
-- verifies with one names its id (`bound_id`), sealed with the server key as `signing_keys` are
-- (the element authenticated with each).
CREATE TABLE element_signing_keys (
    product_id text NOT NULL,
    url text NOT NULL,
    resource text NOT NULL,
    sealed_current bytea NOT NULL,
    sealed_previous bytea,
    replaced_at timestamptz,
    bound_id text UNIQUE,
    bound_at timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (product_id, url, resource)
);

-- A key written before the service is sent it (a subscribe or a rotation through the
-- workspace), removed once it is kept where it belongs or the service refused it: the service
-- never holds a key the servers have lost. A row left behind names the product and the member.
CREATE TABLE pending_signing_keys (
    attempt text PRIMARY KEY,
    product_id text NOT NULL,
    sealed_key bytea NOT NULL,
    created_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
