-- Whether a run kept its capture as the measure's media, as
-- sqlite/0005_media_kept.sql (which says what each value means).
ALTER TABLE measures ADD COLUMN media_kept BOOLEAN;
