-- Keys in byte order (COLLATE "C"), whatever the database's own collation: the streamed reads
-- page by item id in SQLite's order of its keys (paging.ts), and need an index to start a page
-- from the last key without sorting the batch.
  CREATE INDEX items_key ON items (batch_id, item_id COLLATE "C");
  CREATE INDEX attempts_key ON attempts (batch_id, item_id COLLATE "C", seq);
