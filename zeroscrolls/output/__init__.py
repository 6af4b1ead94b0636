"""What a run leaves on disk for people: the run folder, its report and its plots."""
