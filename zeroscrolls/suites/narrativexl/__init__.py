"""NarrativeXL (Moskvichev & Mai, 2023): read-along memory questions over Project Gutenberg books."""
