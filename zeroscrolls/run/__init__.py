"""What one run is, as values: its configuration, each example planned into a request, its results."""
