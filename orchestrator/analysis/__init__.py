"""From cells to answers: grouping, comparison, trends and verdicts. Pure; no rendering."""
