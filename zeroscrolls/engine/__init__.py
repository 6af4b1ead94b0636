"""Carrying out a plan: the scheduler and cost cap, collecting answers, the runner."""
