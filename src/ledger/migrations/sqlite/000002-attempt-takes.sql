-- Takes: a redo (run --redo) makes a new take of a done item; earlier takes keep their files.
  ALTER TABLE attempts ADD COLUMN take INTEGER NOT NULL DEFAULT 1;
