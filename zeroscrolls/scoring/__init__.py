"""Scores and what is read from them: scoring, format analysis, intervals, comparisons, submissions."""
