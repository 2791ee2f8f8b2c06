-- media_kept records whether a run kept its capture (video, images, captures,
-- signal) as the measure's media: 1 when it did, 0 when it kept none (a live
-- session, or a server that keeps no media). NULL until the measure ends,
-- for measures that ended before this was recorded, and for a run that the
-- sweep ended after its instance died (only that instance knew).
ALTER TABLE measures ADD COLUMN media_kept INTEGER;
