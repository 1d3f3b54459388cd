-- The support index's counts (0002) kept once per statement, from the rows each statement
-- touched, instead of once per row: a statement that writes many transactions at once (a bulk
-- load, a future batched fill) updated the same few count rows once per transaction, and in
-- one transaction every such update lengthens the row's chain of versions the next one walks.

DROP TRIGGER index_counts_follow ON index_transactions;
DROP FUNCTION index_counts_follow();

CREATE FUNCTION index_counts_add(delta bigint, status text, product_id text, product_name text)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO index_counts (status_key, product_key, name_key, status, product_id,
                              product_name, n)
    VALUES (coalesce('=' || status, '-'), coalesce('=' || product_id, '-'),
            coalesce('=' || product_name, '-'), status, product_id, product_name, delta)
    ON CONFLICT (status_key, product_key, name_key) DO UPDATE SET n = index_counts.n + delta;
$$;

CREATE FUNCTION index_counts_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM index_counts_add(count(*), status, product_id, product_name)
    FROM added GROUP BY status, product_id, product_name;
    RETURN NULL;
END
$$;

CREATE FUNCTION index_counts_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM index_counts_add(-count(*), status, product_id, product_name)
    FROM removed GROUP BY status, product_id, product_name;
    RETURN NULL;
END
$$;

CREATE FUNCTION index_counts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM index_counts_add(-count(*), status, product_id, product_name)
    FROM removed GROUP BY status, product_id, product_name;
    PERFORM index_counts_add(count(*), status, product_id, product_name)
    FROM added GROUP BY status, product_id, product_name;
    RETURN NULL;
END
$$;

CREATE TRIGGER index_counts_added AFTER INSERT ON index_transactions
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION index_counts_added();
CREATE TRIGGER index_counts_removed AFTER DELETE ON index_transactions
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION index_counts_removed();
CREATE TRIGGER index_counts_changed AFTER UPDATE ON index_transactions
    REFERENCING OLD TABLE AS removed NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION index_counts_changed();
