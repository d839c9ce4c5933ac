-- Each saved file's modification time (ms since the epoch, whole) as it was once saved, so that
-- `status` and `plan` can tell a file edited since by one stat, without reading it (docs/results.md).
-- NULL for files saved before: only their size is compared without --verify.
  ALTER TABLE files ADD COLUMN mtime_ms INTEGER;
