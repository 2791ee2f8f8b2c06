-- Each member row also counts its set's measures, kept by a trigger, as
-- sqlite/0007_member_counts.sql (which says why). The primary key's index
-- carries the count, so that a tag's member list and its counts are read
-- from the index alone (as SQLite reads them from its WITHOUT ROWID table).
ALTER TABLE tag_set_members ADD COLUMN measures BIGINT NOT NULL DEFAULT 0;
UPDATE tag_set_members SET measures = (SELECT measures FROM tag_sets WHERE key = tag_set_members.tag_set);
ALTER TABLE tag_set_members DROP CONSTRAINT tag_set_members_pkey,
	ADD PRIMARY KEY (client, tag, tag_set) INCLUDE (measures);

-- The function names its table in the environment's schema whatever the
-- search_path of the session that fires it.
CREATE FUNCTION tag_set_members_count() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
	UPDATE tag_set_members SET measures = NEW.measures WHERE tag_set = NEW.key;
	RETURN NULL;
END
$$;
CREATE TRIGGER tag_set_members_count AFTER UPDATE OF measures ON tag_sets
	FOR EACH ROW EXECUTE FUNCTION tag_set_members_count();
