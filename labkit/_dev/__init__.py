"""Developer tools (not used by the lessons)."""
