-- The service connection and the support index: the team's one copy of the service's
-- transactions and products, synced by the servers for every console (partner-server).

-- One row: the service the workspace's servers call for everyone. The client secret is sealed
-- with the server key (AES-256-GCM-SIV, partner-seal), the base URL and client id authenticated
-- with it; it is never sent to a console.
CREATE TABLE service_connection (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    base_url text NOT NULL,
    client_id text NOT NULL,
    sealed_secret bytea NOT NULL,
    set_by text NOT NULL,
    set_at timestamptz NOT NULL DEFAULT now()
);

-- The support index: what `partner-index` keeps on a laptop, once for the team. Each
-- transaction's columns are partner-index's `Columns` (one home for what a question filters
-- on); `body` is the JSON as the service sent it, `words` the words of its request, response
-- and other fields ('simple': ids and names as written).
CREATE TABLE index_transactions (
    seq bigserial UNIQUE,
    id text PRIMARY KEY,
    status text,
    product_id text,
    product_name text,
    request_type text,
    response_status text,
    partner_status text,
    reference_number text,
    requesting_party text,
    loan_number text,
    loan jsonb,
    created timestamptz,
    updated timestamptz,
    body text NOT NULL,
    events text,
    words tsvector NOT NULL
);
-- Newest first, as the local index answers: `created` descending (none last), then the order
-- of storing.
CREATE INDEX index_transactions_newest ON index_transactions (created DESC NULLS LAST, seq DESC);
CREATE INDEX index_transactions_updated ON index_transactions (updated);
CREATE INDEX index_transactions_status ON index_transactions (status, created DESC NULLS LAST, seq DESC);
CREATE INDEX index_transactions_product ON index_transactions (product_id, created DESC NULLS LAST, seq DESC);
CREATE INDEX index_transactions_product_name ON index_transactions (lower(product_name));
CREATE INDEX index_transactions_request_type ON index_transactions (request_type, created DESC NULLS LAST, seq DESC);
CREATE INDEX index_transactions_response_status ON index_transactions (response_status, created DESC NULLS LAST, seq DESC);
CREATE INDEX index_transactions_partner_status ON index_transactions (lower(partner_status));
CREATE INDEX index_transactions_reference ON index_transactions (lower(reference_number));
CREATE INDEX index_transactions_loan_number ON index_transactions (lower(loan_number));
CREATE INDEX index_transactions_words ON index_transactions USING gin (words);

-- How many transactions there are per status, product id and product name, kept by a trigger as
-- the index changes: the support desk's counts of everything (or of a status, a product) are
-- read from these few rows instead of grouping a million. A key is the value prefixed with `=`,
-- or `-` for none, so that no value is mistaken for none.
CREATE TABLE index_counts (
    status_key text NOT NULL,
    product_key text NOT NULL,
    name_key text NOT NULL,
    status text,
    product_id text,
    product_name text,
    n bigint NOT NULL,
    PRIMARY KEY (status_key, product_key, name_key)
);

CREATE FUNCTION index_counts_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE index_counts SET n = n - 1
        WHERE status_key = coalesce('=' || OLD.status, '-')
          AND product_key = coalesce('=' || OLD.product_id, '-')
          AND name_key = coalesce('=' || OLD.product_name, '-');
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO index_counts (status_key, product_key, name_key, status, product_id,
                                  product_name, n)
        VALUES (coalesce('=' || NEW.status, '-'), coalesce('=' || NEW.product_id, '-'),
                coalesce('=' || NEW.product_name, '-'), NEW.status, NEW.product_id,
                NEW.product_name, 1)
        ON CONFLICT (status_key, product_key, name_key) DO UPDATE SET n = index_counts.n + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER index_counts_follow
    AFTER INSERT OR DELETE OR UPDATE OF status, product_id, product_name ON index_transactions
    FOR EACH ROW EXECUTE FUNCTION index_counts_follow();

CREATE TABLE index_products (
    id text PRIMARY KEY,
    name text,
    updated timestamptz,
    body text NOT NULL
);

-- How far the sync has come: partner-index's marks, under the same keys.
CREATE TABLE index_marks (
    key text PRIMARY KEY,
    value text NOT NULL
);
