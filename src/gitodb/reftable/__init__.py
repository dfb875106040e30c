"""Git's reftable format: block codec, records, table reader and writer, and the stack.

``reader.TableReader`` reads one ``*.ref`` file; ``writer.TableWriter`` builds one;
``stack.Stack`` manages ``reftable/tables.list`` (merged view, atomic additions,
geometric compaction).
"""
