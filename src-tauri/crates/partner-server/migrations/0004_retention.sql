-- Retention on the server, as the local listener keeps it (partner-listener's retention
-- classes): each capture's size as stored, and a tally per verdict that the prune reads
-- instead of counting a million rows.

ALTER TABLE captures ADD COLUMN size bigint GENERATED ALWAYS AS (octet_length(record)) STORED;

CREATE TABLE capture_tally (
    verdict text PRIMARY KEY,
    captures bigint NOT NULL,
    bytes bigint NOT NULL
);

INSERT INTO capture_tally (verdict, captures, bytes)
SELECT verdict, count(*), coalesce(sum(size), 0) FROM captures GROUP BY verdict;

-- Once per statement (a writer's batch, a prune, a clear), from the rows it touched.
CREATE FUNCTION capture_tally_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO capture_tally (verdict, captures, bytes)
    SELECT verdict, count(*), coalesce(sum(size), 0) FROM added GROUP BY verdict
    ON CONFLICT (verdict) DO UPDATE SET captures = capture_tally.captures + excluded.captures,
        bytes = capture_tally.bytes + excluded.bytes;
    RETURN NULL;
END
$$;

CREATE FUNCTION capture_tally_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE capture_tally t SET captures = t.captures - r.captures, bytes = t.bytes - r.bytes
    FROM (SELECT verdict, count(*) AS captures, coalesce(sum(size), 0) AS bytes
          FROM removed GROUP BY verdict) r
    WHERE t.verdict = r.verdict;
    RETURN NULL;
END
$$;

CREATE TRIGGER capture_tally_added AFTER INSERT ON captures
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION capture_tally_added();
CREATE TRIGGER capture_tally_removed AFTER DELETE ON captures
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION capture_tally_removed();
