"""Scenario evals: how well the planner does on a real model (`python -m evals`)."""
