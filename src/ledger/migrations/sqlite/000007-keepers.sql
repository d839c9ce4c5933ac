-- Keepers (docs/gallery.md): which take of each manifest item a person chose. `item_id` is the
-- manifest item (the group of its variants), `kept_item_id` the ledger item whose take is kept.
-- No foreign key: an item renamed or removed from the manifest keeps its row until kept again.
  CREATE TABLE keepers (
    batch_id     INTEGER NOT NULL REFERENCES batches(id),
    item_id      TEXT NOT NULL,
    kept_item_id TEXT NOT NULL,
    take         INTEGER NOT NULL,
    chosen_at    TEXT NOT NULL,
    PRIMARY KEY (batch_id, item_id)
  ) WITHOUT ROWID;
