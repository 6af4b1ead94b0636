"""Where rows come from: data sources, the JSONL reader, sampling, and downloads."""
