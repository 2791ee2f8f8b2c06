-- Each member row of a tag set also counts the set's measures. The size of
-- a filtered list is then summed from the member rows that the filter reads
-- anyway: reading the counts of thousands of matching sets from tag_sets
-- costs a lookup each, or a scan of all the client's sets.
--
-- A trigger keeps the copies equal to tag_sets.measures, in the statement
-- that changes it, whatever version of the server wrote it: an instance
-- not yet upgraded counts right too.
ALTER TABLE tag_set_members ADD COLUMN measures INTEGER NOT NULL DEFAULT 0;
UPDATE tag_set_members SET measures = (SELECT measures FROM tag_sets WHERE key = tag_set_members.tag_set);
CREATE TRIGGER tag_set_members_count AFTER UPDATE OF measures ON tag_sets
BEGIN
	UPDATE tag_set_members SET measures = NEW.measures WHERE tag_set = NEW.key;
END;
