"""Pack format: entries, deltas, indexes (.idx v1/v2, .rev), reader, writer, indexer."""
